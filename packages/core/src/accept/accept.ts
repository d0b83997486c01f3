import { domainOf, localPart } from '../base/address-parts.js';
import { MailroomError } from '../base/errors.js';
import { newId } from '../base/ids.js';
import type { AuthContext } from '../context/auth-context.js';
import { assertKeySender } from '../keys/key-domains.js';
import { contentFromMessage, contentFromTemplate, prepareContent } from '../render/index.js';
import { validationError } from '../request/issues.js';
import type { NormalizedContentRequest, NormalizedRecipient, SourceSpec } from '../request/request-types.js';
import { probeCsvSource } from '../sources/csv-probe.js';
import { newDelivery } from '../store/new-delivery.js';
import type {
  AttachmentSpec,
  BatchRecord,
  ContentSnapshot,
  DeliveryRecord,
  Json,
  MailingKind,
  MailingRecord,
  ProfileUpsert,
  SenderRecord,
  SourceJobRecord,
  Variables,
} from '../store/records.js';
import type { BatchCommitResult, BatchTarget } from '../store/store.js';
import type { AcceptContext } from './accept-context.js';
import { fetchUrlAttachments } from './attachments-fetch.js';

/**
 * Everything the engine checks before it writes: the sender identity, the template, the audience group,
 * all in the caller's project (another project's ref is indistinguishable from none), and the content's
 * Liquid (parsed now so a syntax error is a 422 at accept time, not a failure per recipient later).
 */
export async function resolveContent(
  ctx: AcceptContext,
  auth: AuthContext,
  req: NormalizedContentRequest,
): Promise<{ sender: SenderRecord; content: ContentSnapshot }> {
  const projectId = auth.project.id;
  assertKeySender(auth, req.sender.address);
  const sender = await ctx.store.findSender(projectId, req.sender.address);
  if (!sender) {
    throw new MailroomError(
      'SENDER_NOT_ALLOWED',
      `Sender ${req.sender.address} is not an identity of this project`,
    );
  }
  let body: { html: string | null; text: string | null };
  let subject = req.subject;
  let variables: Variables = {};
  let templateRef: string | null = null;
  let templateVersion: number | null = null;
  if (req.template) {
    const template = await ctx.store.getTemplate(projectId, req.template.ref);
    if (!template) throw new MailroomError('NOT_FOUND', `Template ${req.template.ref} not found`);
    body = contentFromTemplate(template);
    variables = req.template.variables;
    templateRef = template.ref;
    templateVersion = template.version;
    subject ??= template.subject ?? missingSubject(template.ref);
  } else {
    body = contentFromMessage(req.message ?? '');
  }
  const content: ContentSnapshot = {
    subject: subject ?? missingSubject(null),
    preheader: req.preheader,
    html: body.html,
    text: body.text,
    variables,
    templateRef,
    templateVersion,
    ...(req.track ? { track: req.track } : {}),
  };
  // Parse once now: a Liquid syntax error refuses the request instead of failing every recipient.
  prepareContent(content, { strictVariables: ctx.strictVariables });
  await checkAttachments(ctx, req.attachments);
  return { sender, content };
}

/** A request without `subject` whose template has no default subject either: a 400 saying both ways out. */
function missingSubject(templateRef: string | null): never {
  const message =
    templateRef === null
      ? 'Required'
      : `Required: template ${templateRef} has no default subject; give subject in the request, or store one ` +
        `with the template (mailroom template add --subject, or admin.createTemplate({ subject }))`;
  throw validationError([{ code: 'custom', path: ['subject'], message }]);
}

/**
 * Checks the count and the total decoded size of a request's attachments, then fetches those given by
 * URL (once, now) and fills in their bytes, so the request is refused at accept time if a file cannot be
 * had, and workers never fetch.
 */
async function checkAttachments(ctx: AcceptContext, attachments: AttachmentSpec[]): Promise<void> {
  const { maxCount, maxTotalBytes } = ctx.limits.attachments;
  if (attachments.length > maxCount) {
    throw new MailroomError('PAYLOAD_TOO_LARGE', `At most ${maxCount} attachments per request`);
  }
  let total = 0;
  for (const a of attachments) {
    if (a.contentBase64 !== undefined) total += base64DecodedLength(a.contentBase64);
  }
  if (total > maxTotalBytes) {
    throw new MailroomError(
      'PAYLOAD_TOO_LARGE',
      `Attachments total ${total} bytes; the limit is ${maxTotalBytes}`,
    );
  }
  await fetchUrlAttachments(ctx, attachments, maxTotalBytes - total);
}

function base64DecodedLength(b64: string): number {
  const padding = b64.endsWith('==') ? 2 : b64.endsWith('=') ? 1 : 0;
  return Math.floor((b64.length * 3) / 4) - padding;
}

/**
 * Checks an audience group ref in the project; returns its id. A group is created by the admin (the API
 * has no route for it), so the 404 says how, with the caller's own project id.
 */
/**
 * A topic named by a request (`options.topic`, a source's `topic`) must be a topic of the project:
 * `NOT_FOUND` otherwise, before anything is written.
 */
export async function resolveTopic(
  ctx: AcceptContext,
  auth: AuthContext,
  key: string | null,
): Promise<string | null> {
  if (!key) return null;
  if (!(await ctx.store.getTopic(auth.project.id, key))) {
    throw new MailroomError(
      'NOT_FOUND',
      `Topic ${key} not found; create it first: POST /topics or mailroom.topics.create(auth, { key: '${key}', name })`,
    );
  }
  return key;
}

/**
 * Sending past consent (`includeUnsubscribed`) is an admin act: a key of scope `full` only (an in-process
 * caller, with no key, acts with every right).
 */
export function assertMayIncludeUnsubscribed(auth: AuthContext, includeUnsubscribed: boolean): void {
  if (!includeUnsubscribed || !auth.key || auth.key.scope === 'full') return;
  throw new MailroomError(
    'FORBIDDEN',
    `includeUnsubscribed sends to people who unsubscribed: it needs a key of scope full (this key is ${auth.key.scope})`,
  );
}

export async function resolveGroup(
  ctx: AcceptContext,
  auth: AuthContext,
  ref: string | null,
): Promise<string | null> {
  if (!ref) return null;
  const projectId = auth.project.id;
  const group = await ctx.store.getGroup(projectId, ref);
  if (!group) {
    throw new MailroomError(
      'NOT_FOUND',
      `Audience group ${ref} not found; create it first: mailroom audience create --project ${projectId} ` +
        `--ref ${ref}, or admin.createAudienceGroup(projectId, { ref: '${ref}' }) when embedded`,
    );
  }
  return group.id;
}

/**
 * Checks every source of a batch and turns it into a durable job. An audience group must exist in the
 * project; a CSV file must be reachable through the guarded fetcher on a host that serves byte ranges
 * (probed now, so a host without them is a 422 at accept time, not a failure later).
 */
export async function resolveSources(
  ctx: AcceptContext,
  auth: AuthContext,
  mailingId: string,
  batchId: string,
  sources: SourceSpec[],
  now: Date,
): Promise<SourceJobRecord[]> {
  const jobs: SourceJobRecord[] = [];
  for (const source of sources) {
    let kind: SourceJobRecord['kind'];
    let config: Json;
    const topic = await resolveTopic(ctx, auth, source.topic);
    if (source.kind === 'csv') {
      kind = 'csv';
      config = { ...(await probeCsvSource(ctx, source)), ...(topic ? { topic } : {}) };
    } else {
      assertMayIncludeUnsubscribed(auth, source.includeUnsubscribed);
      kind = 'audience';
      config = {
        groupId: await resolveGroup(ctx, auth, source.ref),
        ref: source.ref,
        actionOnExistingTrait: source.actionOnExistingTrait,
        actionOnExistingProfile: source.actionOnExistingProfile,
        includeUnsubscribed: source.includeUnsubscribed,
        ...(topic ? { topic } : {}),
      };
    }
    jobs.push({
      id: newId('src', now.getTime()),
      projectId: auth.project.id,
      mailingId,
      batchId,
      kind,
      config,
      status: 'pending',
      checkpoint: null,
      rowsDone: 0,
      rowsFailed: 0,
      rowErrors: [],
      error: null,
      leaseExpiresAt: null,
      leaseToken: 0,
      createdAt: now,
      updatedAt: now,
    });
  }
  return jobs;
}

/** A new mailing record (single message or broadcast) from the resolved request. */
export function newMailing(
  auth: AuthContext,
  kind: MailingKind,
  req: NormalizedContentRequest,
  sender: SenderRecord,
  content: ContentSnapshot,
  options: MailingRecord['options'],
  now: Date,
): MailingRecord {
  return {
    id: newId(kind === 'message' ? 'mlg' : 'bcm', now.getTime()),
    projectId: auth.project.id,
    kind,
    ref: newId(kind === 'message' ? 'msg' : 'bc', now.getTime()),
    status: options.scheduleFor && options.scheduleFor > now ? 'scheduled' : 'queued',
    sender: {
      address: sender.address,
      name: req.sender.name ?? sender.name ?? localPart(sender.address),
    },
    replyTo: req.replyAddress,
    content,
    attachments: req.attachments,
    invitation: req.invitation,
    options,
    sandbox: auth.mode === 'sandbox',
    batchCount: 0,
    createdAt: now,
    updatedAt: now,
  };
}

/** The deliveries and profile rows of one batch's inline recipients. */
export function buildBatch(
  mailing: MailingRecord,
  seq: number,
  recipients: NormalizedRecipient[],
  now: Date,
): { batch: BatchRecord; deliveries: DeliveryRecord[]; profiles: ProfileUpsert[] } {
  const batch: BatchRecord = {
    id: newId('bat', now.getTime()),
    mailingId: mailing.id,
    seq,
    recipientCount: recipients.length,
    createdAt: now,
  };
  const notBefore =
    mailing.options.scheduleFor && mailing.options.scheduleFor > now ? mailing.options.scheduleFor : now;
  const domain = domainOf(mailing.sender.address);
  // Delivery ids in the shape of `newId` (time, then 16 characters), ascending within the batch: the
  // batch's time and 11 random characters, then a counter. Ascending keys append to the id index instead
  // of splitting its pages at random, and the batch costs one draw of randomness instead of one per id.
  const idPrefix = newId('dlv', now.getTime()).slice(0, DELIVERY_ID_PREFIX_LENGTH);
  const deliveries: DeliveryRecord[] = new Array(recipients.length);
  const profiles: ProfileUpsert[] = new Array(recipients.length);
  for (let i = 0; i < recipients.length; i++) {
    const r = recipients[i] as NormalizedRecipient;
    const id = idPrefix + i.toString(36).padStart(DELIVERY_ID_COUNTER_LENGTH, '0');
    deliveries[i] = newDelivery(mailing, batch.id, r, notBefore, domain, now, id);
    profiles[i] = r.nameGiven ? { address: r.address, name: r.name } : { address: r.address };
  }
  return { batch, deliveries, profiles };
}

/** Characters of a batch's delivery ids that count the deliveries (36^5: far more than any batch). */
const DELIVERY_ID_COUNTER_LENGTH = 5;
/** `dlv_`, 9 characters of time and 11 random ones: what a batch's delivery ids share. */
const DELIVERY_ID_PREFIX_LENGTH = 'dlv_'.length + 9 + 16 - DELIVERY_ID_COUNTER_LENGTH;

/** Commit and, for a mailing with nothing left to do (sandbox, all duplicates), settle it at once. */
export async function commitAndSettle(
  ctx: AcceptContext,
  write: {
    target: BatchTarget;
    batch: BatchRecord;
    deliveries: DeliveryRecord[];
    profiles: ProfileUpsert[];
    groupId: string | null;
    sourceJobs: SourceJobRecord[];
    now: Date;
  },
): Promise<BatchCommitResult> {
  const result = await ctx.store.commitBatch({
    target: write.target,
    batch: write.batch,
    deliveries: write.deliveries,
    profiles: write.profiles,
    // Inline recipients carry what the sender just said about them: an explicit name wins.
    profileOptions: { onExistingProfile: 'override', onExistingTrait: 'preserve', groupId: write.groupId },
    sourceJobs: write.sourceJobs,
    now: write.now,
  });
  const nothingToSend = result.inserted === 0 || write.deliveries.every((d) => d.status !== 'queued');
  if (nothingToSend && write.sourceJobs.length === 0) {
    if (await ctx.store.completeMailingIfSettled(result.mailing.id, write.now)) {
      const mailing = await ctx.store.getMailingById(result.mailing.id);
      if (mailing) result.mailing = mailing;
    }
  }
  return result;
}
