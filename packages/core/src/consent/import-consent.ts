import { newId } from '../base/ids.js';
import type { BaseContext } from '../context/base-context.js';
import type { ConsentRecord, TopicState, TopicStateChange } from '../store/consent-records.js';

/** The consent columns of one imported CSV row, as read (columns mapped to `consent.*`). */
export interface ImportConsentRow {
  /** The normalized address. */
  address: string;
  /** `consent.state`: `subscribed` or `unsubscribed` (to everything), or empty. */
  state: string | null;
  /** `consent.topics`: `news=subscribed;offers=unsubscribed` (a bare key means subscribed), or empty. */
  topics: string | null;
  /** `consent.source`: where the other service got the consent (`signup form`), or empty. */
  source: string | null;
  /** `consent.time`: when the consent was given (ISO 8601), or empty (the import's time then). */
  time: string | null;
}

/** The longest `consent.source` kept. */
const MAX_SOURCE = 512;

/**
 * Applies the consent columns of an import's committed page (issue 38): moving a list in from another
 * service without asking again. Each row's topic states and subscription are set where they differ from
 * what is stored, with one consent record per change of source `import:<label>` at the row's given time
 * (the other service's source in the record's `wording`). Imports write no events: a list moved in is not
 * a change for webhooks to act on. Unknown topics and unreadable values are left out, row by row.
 * Returns the rows that changed something.
 */
export async function applyImportConsent(
  ctx: BaseContext,
  projectId: string,
  label: string,
  rows: readonly ImportConsentRow[],
): Promise<number> {
  if (rows.length === 0) return 0;
  const { store, clock } = ctx;
  const known = new Set((await store.listTopics(projectId)).map((t) => t.key));
  const now = clock.now();
  let changed = 0;
  for (const row of rows) {
    const wanted = topicsOf(row.topics, known);
    const status = row.state === 'subscribed' || row.state === 'unsubscribed' ? row.state : undefined;
    if (wanted.size === 0 && status === undefined) continue;
    const [profile, current] = await Promise.all([
      store.getProfile(projectId, row.address),
      store.topicStates(projectId, row.address),
    ]);
    const explicit = new Map(current.map((s) => [s.topicKey, s.state]));
    const topics: TopicStateChange[] = [...wanted]
      .filter(([key, state]) => explicit.get(key) !== state)
      .map(([topicKey, state]) => ({ topicKey, state }));
    const statusChange =
      status !== undefined && status !== (profile?.status ?? 'subscribed') ? status : undefined;
    if (topics.length === 0 && statusChange === undefined) continue;
    const at = timeOf(row.time, now);
    const stem = newId('cns', at.getTime());
    let seq = 0;
    const record = (
      change: ConsentRecord['change'],
      topicKey: string | null,
      state: string,
    ): ConsentRecord => ({
      id: `${stem}${(seq++).toString(36).padStart(2, '0')}`,
      projectId,
      address: row.address,
      at,
      change,
      topicKey,
      state,
      source: `import:${label}`,
      ip: null,
      userAgent: null,
      mailingRef: null,
      ...(row.source ? { wording: `source: ${row.source.slice(0, MAX_SOURCE)}` } : {}),
    });
    const records = topics.map((t) => record('topic', t.topicKey, t.state as string));
    if (statusChange) {
      records.push(
        record(statusChange === 'unsubscribed' ? 'unsubscribe' : 'resubscribe', null, statusChange),
      );
    }
    await store.writeConsent({
      projectId,
      address: row.address,
      topics,
      ...(statusChange ? { status: statusChange } : {}),
      records,
      now,
    });
    changed++;
  }
  return changed;
}

/** `news=subscribed;offers=unsubscribed|events` → the known topics' states (bare key: subscribed). */
function topicsOf(cell: string | null, known: ReadonlySet<string>): Map<string, TopicState> {
  const out = new Map<string, TopicState>();
  for (const part of (cell ?? '').split(/[;|,]/)) {
    const [rawKey = '', rawState] = part.split('=');
    const key = rawKey.trim().toLowerCase();
    const state = (rawState ?? 'subscribed').trim().toLowerCase();
    if (!known.has(key) || (state !== 'subscribed' && state !== 'unsubscribed')) continue;
    out.set(key, state);
  }
  return out;
}

/** The consent's given time; an unreadable or future one is the import's time. */
function timeOf(cell: string | null, now: Date): Date {
  if (!cell) return now;
  const t = Date.parse(cell.trim());
  return Number.isFinite(t) && t <= now.getTime() ? new Date(t) : now;
}
