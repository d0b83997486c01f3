import { isMailroomError, MailroomError } from '../base/errors.js';
import type { AuthContext } from '../context/auth-context.js';
import type { BatchItemProblem, BatchItemRequest } from '../request/batch-send-parse.js';
import { parseSendBatchRequest } from '../request/batch-send-parse.js';
import { validationError } from '../request/issues.js';
import type { TransactionStore } from '../store/app-transaction-store.js';
import type { BatchCommitResult, BatchWrite } from '../store/mailing-store.js';
import type { IdempotencyRecord, Json, MailingStatus, SenderRecord } from '../store/records.js';
import { buildBatch, newMailing, resolveContent, resolveGroup, resolveTopic } from './accept.js';
import type { AcceptContext } from './accept-context.js';
import type { SendBatchItemResult, SendBatchResult } from './accept-options.js';
import { requestHash } from './idempotency.js';

/** What accepting a batch needs from the engine besides the context. */
export interface BatchSendDeps {
  /** The sending policy on the sender's domain (see `Acceptance`); throws to refuse. */
  checkSender: (projectId: string, address: string, store: TransactionStore) => Promise<void>;
  /** How long an item's idempotency key is remembered. */
  idempotencyTtlMs: number;
}

/** An item checked against the store: ready to be written. */
interface ResolvedItem {
  item: BatchItemRequest;
  write: BatchWrite;
}

/**
 * Accepts `POST /send/mail/batch`: each item is a single message, checked as `send` checks one (the
 * body, then the sender, template, attachments and sending policy against the store). In `strict` mode
 * one bad item refuses the batch with `VALIDATION_FAILED`, an issue per problem, each path starting with
 * `items[i]`; in `partial` mode the good items are sent and the bad ones answered by index. The good
 * items are written together, in one store transaction where the store can (`commitBatches`).
 *
 * Limits, suppressions and the guard apply as to single sends: each item is held to the single send's
 * limits (recipients, attachments, fields), and its deliveries go through the same worker checks.
 */
export async function acceptSendBatch(
  actx: AcceptContext,
  auth: AuthContext,
  body: unknown,
  deps: BatchSendDeps,
): Promise<SendBatchResult> {
  const parsed = parseSendBatchRequest(body, { recipientsPerMessage: actx.limits.recipientsPerMessage });
  const now = actx.clock.now();
  const problems: BatchItemProblem[] = [...parsed.problems];
  const resolved: ResolvedItem[] = [];
  const lookups = createLookups(actx, auth, deps);
  for (const item of parsed.items) {
    try {
      resolved.push({ item, write: await buildItemWrite(actx, auth, item, lookups, now) });
    } catch (error) {
      problems.push(problemOf(item.index, error));
    }
  }
  if (parsed.mode === 'strict' && problems.length > 0) throw strictRefusal(problems);

  const keyed = await beginItemKeys(actx, auth, resolved, deps.idempotencyTtlMs, now);
  problems.push(...keyed.problems);
  if (parsed.mode === 'strict' && keyed.problems.length > 0) {
    await dropKeys(actx, auth, keyed.begun);
    throw strictRefusal(problems);
  }
  const toWrite = keyed.fresh;
  let results: BatchCommitResult[];
  try {
    results = await commitAll(actx, toWrite);
    await settleEmpty(actx, toWrite, results, now);
  } catch (error) {
    await dropKeys(actx, auth, keyed.begun);
    throw error;
  }
  const answers: SendBatchItemResult[] = [...keyed.replays];
  for (const [i, entry] of toWrite.entries()) {
    const mailing = (results[i] as BatchCommitResult).mailing;
    answers.push({ index: entry.item.index, ref: mailing.ref, status: mailing.status });
  }
  await finishKeys(actx, auth, toWrite, answers);
  for (const problem of problems) {
    answers.push({
      index: problem.index,
      error: { code: problem.code, message: problem.message, issues: problem.issues },
    });
  }
  answers.sort((a, b) => a.index - b.index);
  return {
    mode: parsed.mode,
    accepted: answers.length - problems.length,
    refused: problems.length,
    items: answers,
  };
}

/** Lookups shared by the items of one batch: each sender's policy, group and topic is checked once. */
interface Lookups {
  checkSender(sender: SenderRecord): Promise<void>;
  group(ref: string | null): Promise<string | null>;
  topic(key: string | null): Promise<string | null>;
}

/** `look` memoized by its key, for the items of one batch. */
function once<T>(look: (key: string) => Promise<T>): (key: string) => Promise<T> {
  const seen = new Map<string, Promise<T>>();
  return (key) => {
    let found = seen.get(key);
    if (!found) {
      found = look(key);
      seen.set(key, found);
    }
    return found;
  };
}

function createLookups(actx: AcceptContext, auth: AuthContext, deps: BatchSendDeps): Lookups {
  const sender = once((address) => deps.checkSender(auth.project.id, address, actx.store));
  const group = once((ref) => resolveGroup(actx, auth, ref));
  const topic = once((key) => resolveTopic(actx, auth, key));
  return {
    checkSender: (record) => sender(record.address),
    group: (ref) => (ref === null ? Promise.resolve(null) : group(ref)),
    topic: (key) => (key === null ? Promise.resolve(null) : topic(key)),
  };
}

/** One item as the write of a new single-message mailing, after every check `send` makes. */
async function buildItemWrite(
  actx: AcceptContext,
  auth: AuthContext,
  item: BatchItemRequest,
  lookups: Lookups,
  now: Date,
): Promise<BatchWrite> {
  const req = item.request;
  const { sender, content } = await resolveContent(actx, auth, req);
  await lookups.checkSender(sender);
  const groupId = await lookups.group(req.options.acquiringAudience);
  const topic = await lookups.topic(req.options.topic);
  if (Object.keys(item.headers).length > 0) content.headers = item.headers;
  if (item.tags.length > 0) content.tags = item.tags;
  const scheduleFor = item.scheduleFor && item.scheduleFor > now ? item.scheduleFor : null;
  const mailing = newMailing(
    auth,
    'message',
    req,
    sender,
    content,
    {
      acquiringAudience: req.options.acquiringAudience,
      scheduleFor,
      storeContent: actx.storeContentDefault,
      ...(topic ? { topic } : {}),
    },
    now,
  );
  const { batch, deliveries, profiles } = buildBatch(mailing, 1, req.recipients, now);
  return {
    target: { create: mailing },
    batch,
    deliveries,
    profiles,
    // Inline recipients carry what the sender just said about them: an explicit name wins.
    profileOptions: { onExistingProfile: 'override', onExistingTrait: 'preserve', groupId },
    sourceJobs: [],
    now,
  };
}

/** Where in an item a refusal of the store's checks points. */
const PROBLEM_PATHS: Partial<Record<string, string[]>> = {
  SENDER_NOT_ALLOWED: ['sender'],
  DOMAIN_NOT_VERIFIED: ['sender'],
  FORBIDDEN: ['sender'],
  NOT_FOUND: [],
  PAYLOAD_TOO_LARGE: ['attachments'],
  UNPROCESSABLE: [],
};

/** A refusal of one item as its problem; a fault of the engine (5xx) fails the whole batch. */
function problemOf(index: number, error: unknown): BatchItemProblem {
  if (!isMailroomError(error) || error.status >= 500) throw error;
  const prefix = ['items', index];
  const issues = error.issues
    ? error.issues.map((issue) => ({ ...issue, path: [...prefix, ...issue.path] }))
    : [
        {
          code: error.code.toLowerCase(),
          path: [...prefix, ...(PROBLEM_PATHS[error.code] ?? [])],
          message: error.message,
        },
      ];
  return { index, code: error.code, message: error.message, issues };
}

/** The strict refusal: one `VALIDATION_FAILED` naming every bad item's issues, in item order. */
function strictRefusal(problems: BatchItemProblem[]): MailroomError {
  const sorted = [...problems].sort((a, b) => a.index - b.index);
  const issues = sorted.flatMap((p) => p.issues);
  const error = validationError(issues);
  const indexes = sorted.map((p) => p.index).join(', ');
  return new MailroomError(
    'VALIDATION_FAILED',
    `Invalid batch (strict): ${sorted.length} item(s) refused: ${indexes}. ${error.message}`,
    { issues },
  );
}

/** Items' own idempotency keys, begun before the write: new ones, earlier answers, and conflicts. */
async function beginItemKeys(
  actx: AcceptContext,
  auth: AuthContext,
  resolved: ResolvedItem[],
  ttlMs: number,
  now: Date,
): Promise<{
  fresh: ResolvedItem[];
  replays: SendBatchItemResult[];
  problems: BatchItemProblem[];
  begun: string[];
}> {
  const out = {
    fresh: [] as ResolvedItem[],
    replays: [] as SendBatchItemResult[],
    problems: [] as BatchItemProblem[],
    begun: [] as string[],
  };
  const seen = new Set<string>();
  for (const entry of resolved) {
    const key = entry.item.idempotencyKey;
    if (key === null) {
      out.fresh.push(entry);
      continue;
    }
    const index = entry.item.index;
    const path = ['items', index, 'idempotencyKey'];
    const conflict = (message: string) =>
      out.problems.push({
        index,
        code: 'IDEMPOTENCY_CONFLICT',
        message,
        issues: [{ code: 'idempotency_conflict', path, message }],
      });
    if (seen.has(key)) {
      conflict('This idempotency key is used by an earlier item of the batch');
      continue;
    }
    seen.add(key);
    const hash = requestHash('send', auth, entry.item.body);
    const record: IdempotencyRecord = {
      projectId: auth.project.id,
      key,
      requestHash: hash,
      state: 'running',
      response: null,
      createdAt: now,
      expiresAt: new Date(now.getTime() + ttlMs),
    };
    const begun = await actx.store.beginIdempotent(record, now);
    if (begun.created) {
      out.begun.push(key);
      out.fresh.push(entry);
      continue;
    }
    const { existing } = begun;
    if (existing.requestHash !== hash) {
      conflict('This idempotency key was already used with a different request');
    } else if (existing.state !== 'done' || existing.response === null) {
      conflict('A request with this idempotency key is still being processed; retry later');
    } else {
      const answer = existing.response as { ref: string; status: MailingStatus };
      out.replays.push({ index, ref: answer.ref, status: answer.status, replayed: true });
    }
  }
  return out;
}

/** The items' writes in one store transaction, or one `commitBatch` each on a store without `commitBatches`. */
async function commitAll(actx: AcceptContext, items: ResolvedItem[]): Promise<BatchCommitResult[]> {
  if (items.length === 0) return [];
  const writes = items.map((entry) => entry.write);
  if (actx.store.commitBatches) return actx.store.commitBatches(writes);
  const results: BatchCommitResult[] = [];
  for (const write of writes) results.push(await actx.store.commitBatch(write));
  return results;
}

/** A message with nothing to send (a sandbox key) is settled at once, as `send` settles it. */
async function settleEmpty(
  actx: AcceptContext,
  items: ResolvedItem[],
  results: BatchCommitResult[],
  now: Date,
): Promise<void> {
  for (const [i, entry] of items.entries()) {
    const result = results[i] as BatchCommitResult;
    const nothingToSend = result.inserted === 0 || entry.write.deliveries.every((d) => d.status !== 'queued');
    if (!nothingToSend) continue;
    if (await actx.store.completeMailingIfSettled(result.mailing.id, now)) {
      const mailing = await actx.store.getMailingById(result.mailing.id);
      if (mailing) result.mailing = mailing;
    }
  }
}

/** Each written item's key remembers its answer, as `send` would have: `{ ref, status }`. */
async function finishKeys(
  actx: AcceptContext,
  auth: AuthContext,
  written: ResolvedItem[],
  answers: SendBatchItemResult[],
): Promise<void> {
  const byIndex = new Map(answers.map((a) => [a.index, a]));
  for (const entry of written) {
    const key = entry.item.idempotencyKey;
    const answer = byIndex.get(entry.item.index);
    if (key === null || !answer || !('ref' in answer)) continue;
    const response: Json = { ref: answer.ref, status: answer.status };
    try {
      await actx.store.finishIdempotent(auth.project.id, key, response);
    } catch (error) {
      actx.logger.warn(
        { err: isMailroomError(error) ? error.message : error },
        'could not record a batch item idempotent response; repeats of its key are refused until it expires',
      );
    }
  }
}

/** Forgets the keys begun for a batch that then failed, so it can be sent again. */
async function dropKeys(actx: AcceptContext, auth: AuthContext, keys: string[]): Promise<void> {
  for (const key of keys) {
    await actx.store.dropIdempotent(auth.project.id, key).catch((error: unknown) => {
      actx.logger.warn(
        { err: error },
        'could not release an idempotency key; it stays held until it expires',
      );
    });
  }
}
