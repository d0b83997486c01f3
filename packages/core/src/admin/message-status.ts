import { MailroomError } from '../base/errors.js';
import type { AuthContext } from '../context/auth-context.js';
import type { BaseContext } from '../context/base-context.js';
import { liquidEngines } from '../render/liquid-engine.js';
import { parseLiquid } from '../render/parse-liquid.js';
import { buildScope } from '../render/recipient-scope.js';
import { singleLine } from '../render/single-line.js';
import type { EventRecord } from '../store/event-records.js';
import type { DeliveryRecord, InboundSignalRecord, Json, MailingRecord } from '../store/records.js';
import type { MailingView } from './mailing-view.js';
import type { MessageStatusView, RecipientStatusView } from './message-status-view.js';

/** Recipients and events listed per message: a single message has few (its `to`, `cc` and `bcc`). */
const RECIPIENTS_LIMIT = 100;
const TIMELINE_LIMIT = 100;

/** Members of an event's data that say who it is about, not what happened. */
const IDENTITY_KEYS = new Set(['event_id', 'project_id', 'mailing', 'delivery', 'address']);

/** What {@link messageStatus} borrows from the engine. */
interface MessageStatusDeps {
  resolveAuth(auth: string | AuthContext): Promise<AuthContext>;
  view(mailing: MailingRecord): Promise<MailingView>;
}

/**
 * `GET /messages/:ref`: a single message by the `ref` `send` answered (`msg_...`), or one recipient of
 * any mailing by the RFC Message-ID it was sent with (`<dlv_...@domain>`, angle brackets optional).
 * Every read is by key: the mailing by (project, ref), a delivery by id (the Message-ID's local part is
 * the delivery's id), its events by delivery id, its reports by delivery id; never a scan, so it stays
 * cheap while a large broadcast sends. Another project's ref or Message-ID is `NOT_FOUND`.
 */
export async function messageStatus(
  ctx: BaseContext,
  deps: MessageStatusDeps,
  auth: string | AuthContext,
  ref: string,
): Promise<MessageStatusView> {
  const { project } = await deps.resolveAuth(auth);
  const { store } = ctx;
  const notFound = () => new MailroomError('NOT_FOUND', `Message ${ref} not found`);
  let mailing: MailingRecord | undefined;
  let deliveries: DeliveryRecord[];
  let more = false;
  if (ref.includes('@')) {
    const messageId = ref.startsWith('<') ? ref : `<${ref}>`;
    const id = messageId.slice(1, messageId.indexOf('@'));
    const delivery = id.startsWith('dlv_') ? await store.getDelivery(id) : undefined;
    if (!delivery || delivery.projectId !== project.id || delivery.messageId !== messageId) throw notFound();
    mailing = await store.getMailingById(delivery.mailingId);
    deliveries = [delivery];
  } else {
    mailing = await store.getMailing(project.id, ref);
    // A broadcast's recipients are many: they are read in pages (`GET /broadcasts/:ref`).
    if (mailing?.kind !== 'message') throw notFound();
    deliveries = await store.listDeliveries(mailing.id, { limit: RECIPIENTS_LIMIT + 1 });
    more = deliveries.length > RECIPIENTS_LIMIT;
    deliveries = deliveries.slice(0, RECIPIENTS_LIMIT);
  }
  if (!mailing) throw notFound();
  const subjectOf = subjectRenderer(mailing);
  const recipients = await Promise.all(
    deliveries.map(async (d) => {
      const [events, reports] = await Promise.all([
        store.listEvents(project.id, { deliveryId: d.id }, { limit: TIMELINE_LIMIT }),
        store.listInboundSignals(d.id),
      ]);
      return recipientView(d, subjectOf(d), events, reports);
    }),
  );
  return { ...(await deps.view(mailing)), recipients, more };
}

/**
 * The subject each recipient gets (see {@link RecipientStatusView.subject}): the mailing's Liquid parsed
 * once, rendered per recipient as the worker renders it (lenient: a status read never fails on it).
 */
function subjectRenderer(mailing: MailingRecord): (d: DeliveryRecord) => string {
  const source = mailing.content.subject;
  if (!/\{[{%]/.test(source)) return (d) => d.content?.subject ?? source;
  let parsed: ReturnType<typeof parseLiquid> | undefined;
  try {
    parsed = parseLiquid('text', source, 'subject');
  } catch {
    parsed = undefined;
  }
  return (d) => {
    if (d.content) return d.content.subject;
    if (!parsed) return source;
    try {
      const scope = buildScope(mailing.content.variables, d);
      return singleLine(String(liquidEngines.text.renderSync(parsed, scope)));
    } catch {
      return source;
    }
  };
}

function recipientView(
  d: DeliveryRecord,
  subject: string,
  events: EventRecord[],
  reports: InboundSignalRecord[],
): RecipientStatusView {
  return {
    address: d.address,
    name: d.name,
    subject,
    status: d.status,
    attempts: d.attempts,
    messageId: d.messageId,
    nextAttemptAt: d.nextAttemptAt,
    sentAt: d.sentAt,
    lastResponse: d.lastResponse,
    lastError: d.lastError,
    createdAt: d.createdAt,
    updatedAt: d.updatedAt,
    timeline: events.map((e) => ({ id: e.id, type: e.type, at: e.createdAt, details: detailsOf(e) })),
    reports: reports.map((r) => ({
      kind: r.kind,
      source: r.source,
      reason: r.reason,
      status: r.status,
      createdAt: r.createdAt,
    })),
  };
}

function detailsOf(event: EventRecord): Record<string, Json> {
  const details: Record<string, Json> = {};
  for (const [key, value] of Object.entries(event.data)) {
    if (!IDENTITY_KEYS.has(key) && value !== undefined) details[key] = value as Json;
  }
  return details;
}
