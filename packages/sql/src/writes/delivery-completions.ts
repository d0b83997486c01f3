import type { OutboxWrite } from '@mailroom/core';
import type { SqlClaims } from '../claims/sql-claims.js';
import type { Db } from '../connection/connect.js';
import type { SqlRunner } from '../connection/sql-runner.js';
import type { SqlDialect } from '../dialects/sql-dialect.js';
import type { Codec } from '../rows/codec.js';
import type { OutcomeItem } from '../rows/outcome-rows.js';

/** Outcomes written per group (one transaction; one statement on PostgreSQL and a SQLite dialect). */
const MAX_GROUP = 500;

/** Writes the outboxes of the written outcomes, in their transaction (`roles/event-store.ts`). */
export type OutboxWriter = (
  runner: SqlRunner,
  codec: Codec,
  tx: Db,
  outboxes: ReadonlyArray<OutboxWrite | undefined>,
) => Promise<void>;

/** What {@link completeDeliveries} writes with. */
export interface CompletionParts {
  dialect: SqlDialect;
  /** The store's database: each group is a transaction of it. */
  db: Db;
  runner: SqlRunner;
  claims: SqlClaims;
  codec: Codec;
  /** Writes the outboxes of the written outcomes. */
  writeOutbox: OutboxWriter;
}

/**
 * `DeliveryQueue.completeDeliveries` on SQL: the outcomes of one call (a worker's outcome buffer
 * flushes many at once) written in groups, and, in input order, which fences held. A group holds
 * distinct ids: an id repeated in the call goes to a later group, written after, so that it finds what
 * the earlier item left, as the contract says. Each group commits whole, with the outboxes of its
 * written outcomes, and is retried on contention alone (whole, so a retry never reports a written
 * outcome as unwritten). A group that fails otherwise is written item by item, so that one bad outcome
 * does not keep the others from being recorded; the call then rejects with the first failure.
 */
export async function completeDeliveries(
  parts: CompletionParts,
  items: readonly OutcomeItem[],
): Promise<boolean[]> {
  const { dialect, db, runner, writeOutbox } = parts;
  const written = new Array<boolean>(items.length).fill(false);
  const writeGroup = (group: readonly OutcomeItem[]): Promise<boolean[]> =>
    runner.retrying(async () => {
      const outboxes = group.some((item) => item.outcome.outbox !== undefined);
      // One statement is one implicit transaction.
      if (dialect.writeOutcomesAlone && !outboxes) {
        return dialect.writeOutcomesAlone(db, runner, parts.codec, group);
      }
      const withEvents = await dialect.writeOutcomesWithEvents?.(db, runner, parts.codec, group);
      if (withEvents) return withEvents;
      return runner.transaction(db, async (tx) => {
        const done = await writeOutcomes(parts, tx, group);
        if (outboxes) {
          const outboxOf = (item: OutcomeItem, i: number) => (done[i] ? item.outcome.outbox : undefined);
          await writeOutbox(runner, parts.codec, tx, group.map(outboxOf));
        }
        return done;
      });
    });

  let rest = items.map((_, index) => index);
  while (rest.length > 0) {
    const group: number[] = [];
    const later: number[] = [];
    const ids = new Set<string>();
    for (const index of rest) {
      const { id } = items[index] as OutcomeItem;
      if (group.length < MAX_GROUP && !ids.has(id)) {
        ids.add(id);
        group.push(index);
      } else {
        later.push(index);
      }
    }
    rest = later;
    const groupItems = group.map((index) => items[index] as OutcomeItem);
    try {
      const done = await writeGroup(groupItems);
      group.forEach((index, i) => {
        written[index] = done[i] === true;
      });
    } catch (error) {
      if (group.length === 1) throw error;
      let failure: { error: unknown } | undefined;
      for (const [i, index] of group.entries()) {
        try {
          written[index] = (await writeGroup([groupItems[i] as OutcomeItem]))[0] === true;
        } catch (itemError) {
          failure ??= { error: itemError };
        }
      }
      if (failure) throw failure.error;
    }
  }
  return written;
}

/** The fenced updates of one group on `tx`, by the fastest path of the dialect. */
async function writeOutcomes(
  { dialect, runner, claims, codec }: CompletionParts,
  tx: Db,
  group: readonly OutcomeItem[],
): Promise<boolean[]> {
  const fast = dialect.writeOutcomes(tx, runner, claims, codec, group);
  if (fast) return fast;
  const written: boolean[] = [];
  for (const item of group) {
    const [text, params] = claims.outcome(item.outcome);
    written.push((await runner.run(tx, text, [...params, item.id, item.leaseToken])).affected > 0);
  }
  return written;
}
