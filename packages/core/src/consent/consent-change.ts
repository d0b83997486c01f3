import { hashedAddress } from '../base/address-hash.js';
import { newId } from '../base/ids.js';
import type { BaseContext } from '../context/base-context.js';
import type { ConsentChange, ConsentRecord, TopicState, TopicStateChange } from '../store/consent-records.js';
import type { EventType, OutboxWrite } from '../store/event-records.js';
import type { ConsentEvents } from './consent-events.js';
import type { ConsentMeta } from './consent-types.js';

/** One consent change of one contact, as the API, a link, a complaint or an import asks for it. */
export interface ConsentChangeInput {
  projectId: string;
  /** The normalized address. */
  address: string;
  /** Topic states to set (`null`: back to the default). Keys must be topics of the project. */
  topics?: Record<string, TopicState | null>;
  /** The subscription to everything. */
  status?: 'subscribed' | 'unsubscribed';
  /** `api`, `one-click`, `unsubscribe-page`, `complaint`, `import:<label>`, ... */
  source: string;
  meta?: ConsentMeta;
  /** The broadcast or message the change came from. */
  mailingRef?: string | null;
  /** The topic a status change came from (a one-click of a topic broadcast), for the record. */
  topicKey?: string | null;
  /** The change kind of the topic records: `signup` and `confirm` for forms. @default 'topic' */
  topicChange?: 'topic' | 'signup' | 'confirm';
  /** The wording the contact agreed to (a form's consent text), kept in each record. */
  wording?: string | null;
  /**
   * More events to write in the change's transaction when a topic state changed (`contact.subscribed`,
   * `contact.confirmed` of a form), with the same keys as the change's own.
   */
  events?: ReadonlyArray<{ type: EventType; data: Record<string, unknown> }>;
}

/** What a change actually changed (a repeat changes, records and announces nothing). */
export interface ConsentChangeResult {
  topics: TopicStateChange[];
  /** The new status, when it changed. */
  status?: 'subscribed' | 'unsubscribed';
}

/** The longest user agent kept in a record. */
const MAX_USER_AGENT = 512;

/**
 * Applies a consent change in one store transaction (`ConsentStore.writeConsent`): only what differs from
 * the stored states is written, with one consent record per change, and its events (`contact.topics_changed`,
 * `contact.unsubscribed`) in the same transaction. The hub's `topicsChanged` follows.
 */
export async function changeConsent(
  ctx: BaseContext,
  input: ConsentChangeInput,
): Promise<ConsentChangeResult> {
  await ctx.ready();
  const { store, clock } = ctx;
  const { projectId, address } = input;
  const [profile, current] = await Promise.all([
    store.getProfile(projectId, address),
    store.topicStates(projectId, address),
  ]);
  const now = clock.now();
  const explicit = new Map(current.map((s) => [s.topicKey, s.state]));
  const topics: TopicStateChange[] = Object.entries(input.topics ?? {})
    .filter(([key, state]) => (explicit.get(key) ?? null) !== state)
    .map(([topicKey, state]) => ({ topicKey, state }));
  const statusNow = profile?.status ?? 'subscribed';
  const status = input.status !== undefined && input.status !== statusNow ? input.status : undefined;
  if (topics.length === 0 && status === undefined) {
    // Subscribing an address with no profile yet makes its profile (nothing changed to record).
    if (!profile && input.status === 'subscribed') {
      await store.writeConsent({ projectId, address, status: 'subscribed', records: [], now });
    }
    return { topics: [] };
  }

  const base = {
    projectId,
    address,
    at: now,
    source: input.source,
    ip: input.meta?.ip ?? null,
    userAgent: input.meta?.userAgent?.slice(0, MAX_USER_AGENT) ?? null,
    mailingRef: input.mailingRef ?? null,
    ...(input.wording ? { wording: input.wording } : {}),
  };
  // One id stem per change and a counter after it: the records of one change list in the order made.
  const stem = newId('cns', now.getTime());
  let seq = 0;
  const record = (change: ConsentChange, topicKey: string | null, state: string | null): ConsentRecord => ({
    id: `${stem}${(seq++).toString(36).padStart(2, '0')}`,
    ...base,
    change,
    topicKey,
    state,
  });
  const records = topics.map((t) => record(input.topicChange ?? 'topic', t.topicKey, t.state));
  if (status)
    records.push(
      record(status === 'unsubscribed' ? 'unsubscribe' : 'resubscribe', input.topicKey ?? null, status),
    );

  const writes: OutboxWrite[] = [];
  const keys = { mailingRef: input.mailingRef ?? null, deliveryId: null, address };
  const ref = input.mailingRef ? { broadcast_ref: input.mailingRef } : {};
  if (topics.length > 0) {
    const changed = topics.map((t) => ({ key: t.topicKey, state: t.state }));
    writes.push(
      await ctx.outbox.event(projectId, 'contact.topics_changed', now, keys, {
        address,
        topics: changed,
        source: input.source,
        ...ref,
      }),
    );
    for (const extra of input.events ?? []) {
      writes.push(await ctx.outbox.event(projectId, extra.type, now, keys, extra.data));
    }
  }
  if (status === 'unsubscribed') {
    writes.push(
      await ctx.outbox.event(projectId, 'contact.unsubscribed', now, keys, {
        address,
        source: input.source,
        ...ref,
      }),
    );
  }
  const outbox: OutboxWrite | undefined =
    writes.length === 0
      ? undefined
      : { events: writes.flatMap((w) => w.events), messages: writes.flatMap((w) => w.messages) };
  await store.writeConsent(
    { projectId, address, topics, ...(status ? { status } : {}), records, now },
    outbox,
  );
  if (topics.length > 0) {
    ctx.events.view<ConsentEvents>().emit('topicsChanged', {
      projectId,
      address,
      topics: topics.map((t) => ({ key: t.topicKey, state: t.state })),
      source: input.source,
    });
  }
  return { topics, ...(status ? { status } : {}) };
}

export { hashedAddress };

/**
 * After an erasure: the address's topic states go, its history is kept under {@link hashedAddress}
 * without IP or user agent, and the erasure itself is appended.
 */
export async function eraseConsentOf(ctx: BaseContext, projectId: string, address: string): Promise<void> {
  const now = ctx.clock.now();
  const hashed = hashedAddress(projectId, address);
  await ctx.store.eraseConsent(projectId, address, hashed, {
    id: newId('cns', now.getTime()),
    projectId,
    address: hashed,
    at: now,
    change: 'erasure',
    topicKey: null,
    state: null,
    source: 'api',
    ip: null,
    userAgent: null,
    mailingRef: null,
  });
}
