import type { DeliveryOutcome, OutboxWrite } from '@mailroom/core';
import type { Codec } from './codec.js';
import type { Db } from './connect.js';
import { writePostgres } from './dialects/postgres/postgres-completions.js';
import { writeSqlite, writeSqliteFile } from './dialects/sqlite/sqlite-completions.js';
import type { OutcomeItem } from './outcome-rows.js';
import type { SqlClaims } from './sql-claims.js';
import type { SqlRunner } from './sql-runner.js';

/** Outcomes written per flush at most. */
const MAX_BATCH = 500;

/** The caller waiting for one or more queued outcomes: settled once all of them are written. */
class Waiter {
  readonly written: boolean[];
  private open: number;
  private failed = false;

  constructor(
    count: number,
    private readonly done: (written: boolean[]) => void,
    private readonly fail: (error: unknown) => void,
  ) {
    this.written = new Array<boolean>(count).fill(false);
    this.open = count;
  }

  resolve(index: number, written: boolean): void {
    this.written[index] = written;
    if (--this.open === 0 && !this.failed) this.done(this.written);
  }

  reject(error: unknown): void {
    if (this.failed) return;
    this.failed = true;
    this.fail(error);
  }
}

/**
 * One outcome waiting for the next flush, and where its result goes (one object per outcome, no
 * closures: a group of a few hundred is queued on every flush).
 */
interface Pending extends OutcomeItem {
  waiter: Waiter;
  /** The outcome's place in its waiter's results. */
  index: number;
}

const resolve = (item: Pending, written: boolean): void => item.waiter.resolve(item.index, written);
const reject = (item: Pending, error: unknown): void => item.waiter.reject(error);

/**
 * Group commit for `completeDelivery`. A worker records outcomes one by one, often many at once; one
 * commit per outcome costs a WAL write on SQLite and a log flush on PostgreSQL and MySQL, which bounds
 * throughput far below what the database can do. Outcomes that arrive while a flush is running (or in
 * the same turn of the event loop) are written together: in one transaction, or on PostgreSQL in one
 * `UPDATE ... FROM (VALUES ...)`. Each caller's promise settles only after the commit, with its own
 * fenced result, so the contract of `completeDelivery` is unchanged.
 */
export interface CompletionBatcher {
  /** Queue an outcome; resolves once it is durable: true if written, false if the lease was lost. */
  complete(id: string, leaseToken: number, outcome: DeliveryOutcome): Promise<boolean>;
  /**
   * Queue several outcomes at once, as many `complete` calls in one turn would (one promise for all:
   * they resolve together, in input order, or it rejects with the first failure).
   */
  completeMany(
    items: ReadonlyArray<{ id: string; leaseToken: number; outcome: DeliveryOutcome }>,
  ): Promise<boolean[]>;
  /** Resolves when every queued outcome has been written. */
  drain(): Promise<void>;
}

/** The batcher for one database. */
export function createCompletionBatcher(
  db: Db,
  runner: SqlRunner,
  claims: SqlClaims,
  codec: Codec,
  /** Writes the outboxes of the written outcomes, in their transaction (`roles/event-store.ts`). */
  writeOutbox: (
    runner: SqlRunner,
    codec: Codec,
    tx: Db,
    outboxes: ReadonlyArray<OutboxWrite | undefined>,
  ) => Promise<void>,
): CompletionBatcher {
  let queue: Pending[] = [];
  let flushing: Promise<void> | undefined;

  /** Each outcome on its own: the fallback when a group fails, so one bad row fails only its caller. */
  const one = async (item: Pending): Promise<void> => {
    try {
      const [text, params] = claims.outcome(item.outcome);
      const { outbox } = item.outcome;
      const run = (on: Db) => runner.run(on, text, [...params, item.id, item.leaseToken]);
      const written = await runner.retrying(async () => {
        if (!outbox) return (await run(db)).affected > 0;
        // The outcome's events commit with it, and only if its fenced update wrote.
        return runner.transaction(db, async (tx) => {
          if ((await run(tx)).affected === 0) return false;
          await writeOutbox(runner, codec, tx, [outbox]);
          return true;
        });
      });
      resolve(item, written);
    } catch (error) {
      reject(item, error);
    }
  };

  /** The group's outcomes, then the outboxes of those written, in one transaction. */
  const writeGroup = async (group: Pending[]): Promise<boolean[]> => {
    const outboxes = group.some((item) => item.outcome.outbox !== undefined);
    if (runner.kind === 'postgres' && !outboxes) return writePostgres(db, runner, codec, group);
    return runner.transaction(db, async (tx) => {
      const written = await writeOutcomes(tx, group);
      if (outboxes) {
        await writeOutbox(
          runner,
          codec,
          tx,
          group.map((item, i) => (written[i] ? item.outcome.outbox : undefined)),
        );
      }
      return written;
    });
  };

  const writeOutcomes = async (tx: Db, group: Pending[]): Promise<boolean[]> => {
    if (runner.kind === 'postgres') return writePostgres(tx, runner, codec, group);
    if (runner.direct) return writeSqliteFile(tx, runner, claims, group);
    if (runner.kind === 'sqlite') return writeSqlite(tx, runner, codec, group);
    const written: boolean[] = [];
    for (const item of group) {
      const [text, params] = claims.outcome(item.outcome);
      written.push((await runner.run(tx, text, [...params, item.id, item.leaseToken])).affected > 0);
    }
    return written;
  };

  const flushAll = async (): Promise<void> => {
    while (queue.length > 0) {
      // A delivery completed twice in one group would make the group's result ambiguous: the second
      // outcome waits for the next group, as if it had come later.
      const group: Pending[] = [];
      const rest: Pending[] = [];
      const ids = new Set<string>();
      for (const item of queue) {
        if (group.length < MAX_BATCH && !ids.has(item.id)) {
          ids.add(item.id);
          group.push(item);
        } else {
          rest.push(item);
        }
      }
      queue = rest;
      if (group.length === 1) {
        await one(group[0] as Pending);
        continue;
      }
      try {
        const written = await writeGroup(group);
        for (let i = 0; i < group.length; i++) resolve(group[i] as Pending, written[i] === true);
      } catch {
        for (const item of group) await one(item);
      }
    }
  };

  /**
   * Start a flush unless one is pending or running (it takes whatever is queued meanwhile). Single
   * outcomes wait for the next turn of the event loop, so that the outcomes of other I/O callbacks of
   * this turn join them; a caller's batch of many flushes right away, as it is a group already (the
   * turn's wait measured about 1 µs per outcome for groups of 100 on a SQLite file).
   */
  const schedule = (grouped: boolean): void => {
    if (flushing) return;
    const start = grouped ? Promise.resolve() : new Promise<void>((resolve) => setImmediate(resolve));
    flushing = start.then(flushAll).finally(() => {
      flushing = undefined;
      if (queue.length > 0) schedule(false);
    });
  };

  return {
    complete(id, leaseToken, outcome) {
      return new Promise<boolean>((done, fail) => {
        const waiter = new Waiter(1, (written) => done(written[0] === true), fail);
        queue.push({ id, leaseToken, outcome, waiter, index: 0 });
        schedule(false);
      });
    },
    completeMany(items) {
      if (items.length === 0) return Promise.resolve([]);
      return new Promise<boolean[]>((done, fail) => {
        const waiter = new Waiter(items.length, done, fail);
        for (let index = 0; index < items.length; index++) {
          const { id, leaseToken, outcome } = items[index] as (typeof items)[number];
          queue.push({ id, leaseToken, outcome, waiter, index });
        }
        schedule(items.length > 1);
      });
    },
    async drain() {
      while (flushing) await flushing;
    },
  };
}
