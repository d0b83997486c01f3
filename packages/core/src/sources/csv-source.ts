import { domainOf, localPart } from '../base/address-parts.js';
import { MailroomError } from '../base/errors.js';
import { yieldToEventLoop } from '../base/event-loop.js';
import type { ImportConsentRow } from '../consent/import-consent.js';
import { keepTopicAllowed } from '../consent/topic-gate.js';
import type { BaseContext } from '../context/base-context.js';
import type { GuardedFetcher } from '../fetch/fetch-types.js';
import { newDelivery } from '../store/new-delivery.js';
import type {
  DeliveryRecord,
  ProfileUpsert,
  ProfileUpsertOptions,
  SourceJobRecord,
} from '../store/records.js';
import type { AudienceSourceConfig } from './audience-source.js';
import { planColumns, readRecipient } from './csv-columns.js';
import { type CsvSourceConfig, isEncoded, parseContentRange } from './csv-probe.js';
import { type CsvNewline, type CsvRow, CsvRowReader } from './csv-row-reader.js';
import type { SourceEnv, SourceExpander, SourcePage } from './source-expander.js';
import { leaseMsOf } from './source-lease.js';

/** The progress a CSV source job checkpoints after each page. */
export interface CsvCheckpoint {
  /** Byte offset of the next row to read: always a row boundary. */
  offset: number;
  /** 1-based line of that row. */
  line: number;
  /** The dialect guessed on the first page, so every page parses alike. */
  delimiter: string | null;
  newline: CsvNewline | null;
  /** The header row, once read. */
  header: string[] | null;
}

/** Options of {@link createCsvExpander}. */
export interface CsvExpanderOptions {
  /** Waits before each retry of a range that failed in a way that may pass (timeout, reset, 5xx). @default [250, 1000, 3000] */
  retryDelaysMs?: number[];
  /** Row errors kept on the job (line and reason); the rest are only counted. @default 100 */
  maxRowErrors?: number;
  /**
   * Rows a page holds before it is committed: a page ends after the first slice of bytes that brings it
   * to this many (so it may hold a slice's rows more), and on page one not before the dialect is
   * guessed. Its records are what the engine holds in memory at once, for up to three pages (the worker
   * expands the next pages while the store writes the first). @default 1024
   */
  pageRows?: number;
}

/** Bytes handed to the row reader at a time: a page overshoots `pageRows` by at most one slice's rows. */
const SLICE_BYTES = 64 * 1024;
/** Jobs whose read-ahead a process keeps between pages (a job continued elsewhere leaves its own behind). */
const MAX_READ_AHEADS = 8;

/**
 * Where a job's download stands between two pages in this process: the reader (its offset and line are
 * the checkpoint of the page last built), the bytes fetched but not read yet, and the next range on its
 * way. Kept only for the very checkpoint it continues: a page of another checkpoint (a commit lost, a
 * job resumed elsewhere) starts afresh from its own.
 */
interface ReadAhead {
  reader: CsvRowReader;
  /** Fetched bytes from the reader's input position on, not handed to it yet. */
  unread: Buffer;
  /** Offset of the first byte not fetched yet. */
  fetchedTo: number;
  /** The range from `fetchedTo`, downloading while the current one is parsed and written. */
  next: Promise<Buffer> | null;
  /** The audience sources of the job's broadcast, as last read, and when (ms since the epoch). */
  audienceJobs?: { readAt: number; jobs: SourceJobRecord[] };
}

/**
 * How long the list of a broadcast's audience sources is reused from one page to the next. A source
 * added by a later batch within that time is seen a page or so later: as if it had been added after
 * those rows were read, which a concurrent batch may be anyway.
 */
const AUDIENCE_JOBS_TTL_MS = 1_000;

const EMPTY = Buffer.alloc(0);
/** Rows mapped between two turns of the event loop (see `yieldToEventLoop`). */
const YIELD_EVERY_ROWS = 1024;

/** CSV preserves what profiles already hold, unless an audience source of the broadcast says otherwise. */
const CSV_PROFILE_OPTIONS: ProfileUpsertOptions = {
  onExistingProfile: 'preserve',
  onExistingTrait: 'preserve',
};

/**
 * CSV file sources: the file is downloaded in byte ranges through the guarded fetcher (`rangeBytes` of
 * the fetch options), each range asked `If-Range` on the ETag (or Last-Modified) learned at accept time,
 * decoded and parsed by {@link CsvRowReader}. A page holds about `pageRows` rows and ends on a row
 * boundary, which is the checkpoint: a resumed page starts there. While a page is parsed and committed,
 * the next range already downloads (one range ahead, kept in this process for the job's next page).
 * Each data row is mapped by the source's `columnMappings` (see `planColumns`), indexed as a profile
 * tagged with the source's `label` (and added to the broadcast's acquiring audience), and becomes a
 * delivery whose traits are the row's (`profile.*` / `recipient.*` in templates). Rows with a bad
 * address are counted and reported with their line numbers, not fatal. If the file changes while it is
 * read (a 200 instead of a 206, another ETag or size), the source fails with that reason instead of
 * mixing two versions.
 */
export function createCsvExpander(options: CsvExpanderOptions = {}): SourceExpander {
  const retryDelays = options.retryDelaysMs ?? [250, 1_000, 3_000];
  const maxRowErrors = options.maxRowErrors ?? 100;
  const pageRows = Math.max(1, options.pageRows ?? 1024);
  // Per fetcher, so that two engines of one process (each with its own fetcher) never share a download.
  const readAheads = new WeakMap<GuardedFetcher, Map<string, ReadAhead>>();

  /** The job's read-ahead if it continues exactly `checkpoint`, taken out of the cache while in use. */
  function takeReadAhead(fetcher: GuardedFetcher, jobId: string, checkpoint: CsvCheckpoint): ReadAhead {
    const jobs = readAheads.get(fetcher);
    const kept = jobs?.get(jobId);
    jobs?.delete(jobId);
    if (kept && kept.reader.offset === checkpoint.offset && kept.reader.line === checkpoint.line) return kept;
    return { reader: new CsvRowReader(checkpoint), unread: EMPTY, fetchedTo: checkpoint.offset, next: null };
  }

  function keepReadAhead(fetcher: GuardedFetcher, jobId: string, state: ReadAhead): void {
    let jobs = readAheads.get(fetcher);
    if (jobs === undefined) {
      jobs = new Map();
      readAheads.set(fetcher, jobs);
    }
    // The oldest goes first; its download, if any, is simply not waited for.
    if (jobs.size >= MAX_READ_AHEADS) jobs.delete(jobs.keys().next().value as string);
    jobs.set(jobId, state);
  }

  async function page(job: SourceJobRecord, env: SourceEnv, now: Date, groupId: string | null) {
    const { ctx, entry } = env;
    const config = job.config as unknown as CsvSourceConfig;
    const checkpoint: CsvCheckpoint = (job.checkpoint as unknown as CsvCheckpoint | null) ?? {
      offset: 0,
      line: 1,
      delimiter: null,
      newline: null,
      header: null,
    };
    const state = takeReadAhead(ctx.fetcher, job.id, checkpoint);
    const { reader } = state;
    const rangeBytes = ctx.fetcher.options.rangeBytes;
    const fetchFrom = (first: number): Promise<Buffer> => {
      const last = Math.min(first + rangeBytes, config.size) - 1;
      return fetchRange(ctx, config, first, last, reader.line, retryDelays);
    };
    const rows: CsvRow[] = [];
    let done = false;
    // Slices until the page is full; a row longer than a range (or the dialect guess on page one) takes
    // the next ranges too. The last rows of the file join the page that reads its last byte.
    for (;;) {
      if (state.unread.length === 0 && state.fetchedTo >= config.size) {
        for (const row of reader.end()) rows.push(row);
        done = true;
        break;
      }
      if (rows.length >= pageRows) break;
      if (state.unread.length === 0) {
        const pending = state.next ?? fetchFrom(state.fetchedTo);
        state.next = null;
        state.unread = await pending;
        state.fetchedTo += state.unread.length;
        if (state.fetchedTo < config.size) {
          state.next = fetchFrom(state.fetchedTo);
          // Awaited by the next page; a page that never comes (the job failed, or went elsewhere) must
          // not leave its failure unhandled.
          state.next.catch(() => undefined);
        }
        continue;
      }
      const slice = state.unread.subarray(0, SLICE_BYTES);
      state.unread = state.unread.subarray(slice.length);
      // A loop, not a spread: the push that completes the dialect guess returns every row read so far.
      for (const row of reader.push(slice)) rows.push(row);
      await yieldToEventLoop();
    }
    if (!done) keepReadAhead(ctx.fetcher, job.id, state);

    let header = checkpoint.header;
    // An audience import (no mailing) makes profiles only.
    const mailing = entry?.mailing ?? null;
    const notBefore =
      mailing?.options.scheduleFor && mailing.options.scheduleFor > now ? mailing.options.scheduleFor : now;
    const domain = mailing ? domainOf(mailing.sender.address) : '';
    // The id prefix of this job's deliveries (see rowDeliveryId).
    const idPrefix = `dlv_${job.id.slice(4, 21)}`;
    const deliveries: DeliveryRecord[] = [];
    const profiles: ProfileUpsert[] = [];
    const consent: ImportConsentRow[] = [];
    const seen = new Set<string>();
    // Shared by every row: nothing downstream mutates an upsert's labels.
    const labels = [config.label];
    let dataRows = 0;
    let failed = 0;
    const rowErrors = [...job.rowErrors];
    let plan = header === null ? null : planColumns(header, config.columnMappings);
    for (let i = 0; i < rows.length; i++) {
      const row = rows[i] as CsvRow;
      if (i % YIELD_EVERY_ROWS === YIELD_EVERY_ROWS - 1) await yieldToEventLoop();
      if (isBlank(row.cells)) continue;
      if (plan === null || header === null) {
        header = row.cells;
        plan = planColumns(header, config.columnMappings);
        continue;
      }
      dataRows++;
      const r = readRecipient(row.cells, plan);
      if (!r.ok) {
        failed++;
        if (rowErrors.length < maxRowErrors) rowErrors.push({ line: row.line, reason: r.reason });
        continue;
      }
      if (seen.has(r.address)) continue;
      seen.add(r.address);
      if (mailing)
        deliveries.push(
          newDelivery(
            mailing,
            job.id,
            { address: r.address, name: r.name ?? localPart(r.address), traits: r.traits },
            notBefore,
            domain,
            now,
            rowDeliveryId(idPrefix, row.line),
          ),
        );
      // An import's consent columns (a broadcast's CSV never changes consent).
      if (!mailing && r.consent) consent.push({ address: r.address, ...r.consent });
      const profile: ProfileUpsert = { address: r.address, traits: r.traits, labels };
      if (r.name !== null) profile.name = r.name;
      profiles.push(profile);
    }
    const next: CsvCheckpoint = {
      offset: reader.offset,
      line: reader.line,
      delimiter: reader.delimiter,
      newline: reader.newline,
      header,
    };
    // A topic broadcast: rows whose contact's state for the topic says no get no delivery.
    const topic = mailing ? (config.topic ?? mailing.options.topic ?? null) : null;
    const result: SourcePage = {
      deliveries: topic ? await keepTopicAllowed(ctx.store, job.projectId, topic, deliveries) : deliveries,
      profiles,
      profileOptions: { ...CSV_PROFILE_OPTIONS, groupId },
      ...(consent.length > 0 ? { consent } : {}),
      patch: {
        checkpoint: next as unknown as SourcePage['patch']['checkpoint'],
        rowsDone: job.rowsDone + dataRows,
        rowsFailed: job.rowsFailed + failed,
        rowErrors,
        ...(done ? { status: 'done' as const } : {}),
      },
    };
    if (mailing) await applyAudienceOptions(ctx, job, result, now, state);
    return result;
  }

  return {
    async expandPage(job, env) {
      // An import's rows join the group it names.
      if (env.entry === null) return page(job, env, env.now, importGroupId(job));
      const acquiring = env.entry.mailing.options.acquiringAudience;
      const group = acquiring ? await env.ctx.store.getGroup(job.projectId, acquiring) : undefined;
      return page(job, env, env.now, group?.id ?? null);
    },
  };
}

/** The group an audience import's rows join (`groupId` of its config). */
function importGroupId(job: SourceJobRecord): string | null {
  const config = job.config as { groupId?: unknown } | null;
  return typeof config?.groupId === 'string' ? config.groupId : null;
}

/** The CSV expander with its defaults, as registered in `SOURCE_EXPANDERS.csv`. */
export const csvExpander: SourceExpander = createCsvExpander();

/**
 * A row for an address that an audience source of the same broadcast already reached is incoming data
 * for a member of that group: its profile upsert follows that source's `actionOnExistingProfile` and
 * `actionOnExistingTrait` (see the package README), committed here ahead of the page, the rest of the
 * page keeping the CSV's own `preserve`. Upserts are idempotent, so a page recomputed after a crash
 * applies them again harmlessly.
 */
async function applyAudienceOptions(
  ctx: BaseContext,
  job: SourceJobRecord,
  page: SourcePage,
  now: Date,
  state: ReadAhead,
): Promise<void> {
  if (page.profiles.length === 0) return;
  const cached = state.audienceJobs;
  const fresh = cached !== undefined && Date.now() - cached.readAt < AUDIENCE_JOBS_TTL_MS;
  const audienceJobs = fresh
    ? cached.jobs
    : (await ctx.store.listSourceJobs(job.mailingId)).filter((j) => j.kind === 'audience');
  if (!fresh) state.audienceJobs = { readAt: Date.now(), jobs: audienceJobs };
  if (audienceJobs.length === 0) return;
  // Only addresses with a stored profile can be group members: one lookup narrows the per-row checks.
  const existing = await ctx.store.findProfiles(
    job.projectId,
    page.profiles.map((p) => p.address),
  );
  if (existing.length === 0) return;
  const known = new Set(existing.map((p) => p.address));
  const byJob = new Map<string, ProfileUpsert[]>();
  for (const profile of page.profiles) {
    if (!known.has(profile.address)) continue;
    const delivery = await ctx.store.findDelivery(job.mailingId, profile.address);
    const owner = delivery && audienceJobs.find((j) => j.id === delivery.batchId);
    if (!owner) continue;
    const list = byJob.get(owner.id) ?? [];
    list.push(profile);
    byJob.set(owner.id, list);
  }
  if (byJob.size === 0) return;
  for (const [ownerId, rows] of byJob) {
    const owner = audienceJobs.find((j) => j.id === ownerId) as SourceJobRecord;
    const config = owner.config as unknown as AudienceSourceConfig;
    const committed = await ctx.store.commitSourcePage(job.id, job.leaseToken, {
      deliveries: [],
      profiles: rows,
      profileOptions: {
        onExistingProfile: config.actionOnExistingProfile,
        onExistingTrait: config.actionOnExistingTrait,
        groupId: page.profileOptions.groupId ?? null,
      },
      patch: {},
      leaseUntil: new Date(now.getTime() + leaseMsOf(job)),
      now,
    });
    if (!committed)
      throw new MailroomError('LEASE_LOST', `Source job ${job.id} was taken over by another worker`);
  }
  const routed = new Set([...byJob.values()].flat());
  page.profiles = page.profiles.filter((p) => !routed.has(p));
}

async function fetchRange(
  ctx: BaseContext,
  config: CsvSourceConfig,
  first: number,
  last: number,
  line: number,
  retryDelays: number[],
): Promise<Buffer> {
  const label = `CSV source ${config.label}`;
  const changed = (how: string) =>
    new MailroomError(
      'UNPROCESSABLE',
      `${label}: the file changed while it was being read (${how}); stopped before line ${line} rather than mix two versions`,
    );
  const headers: Record<string, string> = { range: `bytes=${first}-${last}` };
  const validator = config.etag ?? config.lastModified;
  if (validator !== null) headers['if-range'] = validator;
  for (let attempt = 0; ; attempt++) {
    try {
      const res = await ctx.fetcher.fetch(config.url, { headers, maxBytes: last - first + 1 });
      if (res.status === 206) {
        const range = parseContentRange(res.headers['content-range']);
        const etag = res.headers.etag;
        if (range === null || range.first !== first || (range.size !== null && range.size !== config.size)) {
          res.cancel();
          throw changed(`the host answered Content-Range ${res.headers['content-range'] ?? 'missing'}`);
        }
        if (config.etag !== null && etag !== undefined && etag !== config.etag) {
          res.cancel();
          throw changed(`ETag ${etag} instead of ${config.etag}`);
        }
        if (isEncoded(res.headers['content-encoding'])) {
          res.cancel();
          throw new MailroomError(
            'UNPROCESSABLE',
            `${label}: the host compressed a range; serve the file uncompressed`,
          );
        }
        const bytes = await res.bytes();
        if (bytes.length !== range.last - range.first + 1 || bytes.length === 0) {
          throw new MailroomError('FETCH_REFUSED', `${label}: a range came back short`, { retryable: true });
        }
        return bytes;
      }
      res.cancel();
      if (res.status === 200 || res.status === 412 || res.status === 416) {
        throw changed(
          `the host answered HTTP ${res.status} to a range asked If-Range on the version accepted`,
        );
      }
      throw new MailroomError('FETCH_REFUSED', `${label}: the URL answered HTTP ${res.status}`, {
        retryable: res.status >= 500 || res.status === 429 || res.status === 408,
      });
    } catch (error) {
      const delay = retryDelays[attempt];
      if (!(error instanceof MailroomError) || !error.retryable || delay === undefined) throw error;
      await new Promise((resolve) => setTimeout(resolve, delay));
    }
  }
}

/**
 * The id of the delivery of a CSV row: not random as `newDelivery` makes one, but derived from the job and
 * the row's line, so that a page recomputed after a crash yields the very same deliveries (ids and
 * Message-IDs included), and a million rows cost no million calls to the system's random source. It
 * keeps the shape of `newId`: `dlv_` + the job id's time and first 8 random characters (`prefix`) + the
 * line.
 */
function rowDeliveryId(prefix: string, line: number): string {
  return `${prefix}${line.toString(36).padStart(8, '0')}`;
}

function isBlank(cells: string[]): boolean {
  for (const cell of cells) if (cell !== '') return false;
  return true;
}
