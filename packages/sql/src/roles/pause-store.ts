import {
  type OutboxWrite,
  type PauseRecord,
  type PauseRule,
  type PauseStore,
  SENDER_BLOCK_HELD,
  SENDER_BLOCK_RESUMED,
} from '@mailroom/core';
import type { Db } from '../connection/connect.js';
import type { SqlDialect } from '../dialects/sql-dialect.js';
import type { Codec, Row } from '../rows/codec.js';
import { ms } from '../rows/codec.js';
import type { SqlContext } from '../sql-context.js';
import { writeOutbox } from './event-store.js';
import { andOpenAt } from './open-deliveries.js';

/** Columns of `mailroom_pauses`, in parameter order. */
const PAUSE_COLUMNS = [
  'project_id',
  'scope',
  'target',
  'domains',
  'paused_by',
  'reason',
  'rule',
  'created_at',
  'until_at',
] as const;

/** The pauses active at a time: `until_at` null or after it (one parameter: the time). */
const ACTIVE = '(until_at IS NULL OR until_at > ?)';

/**
 * `PauseStore` on SQL (table of migration `013_pauses`). Adding is an insert that the primary key makes
 * exclusive; removing is a delete whose changed-row count says which caller removed it.
 */
export function sqlPauseStore(ctx: SqlContext): PauseStore {
  const { db, runner, codec, guard, all, first, write, dialect } = ctx;
  const where = 'project_id = ? AND scope = ? AND target = ?';

  return {
    addPause(pause, now, outbox) {
      return guard('addPause', () =>
        runner.transaction(db, async (tx) => {
          const key = [pause.projectId, pause.scope, pause.target];
          // An expired pause of the same key gives way; an active one makes the insert below a no-op.
          await write(
            `DELETE FROM mailroom_pauses WHERE ${where} AND until_at <= ?`,
            [...key, now.getTime()],
            tx,
          );
          const columns = PAUSE_COLUMNS.join(', ');
          const values = runner.values(1, PAUSE_COLUMNS.length);
          const text = dialect.insertIgnore('mailroom_pauses', columns, values, 'project_id, scope, target');
          if ((await write(text, pauseParams(codec, pause), tx)) === 0) return false;
          await writeOutboxIf(ctx, tx, outbox);
          return true;
        }),
      );
    },

    removePause(projectId, scope, target, now, outbox) {
      return guard('removePause', () =>
        runner.transaction(db, async (tx) => {
          const key = [projectId, scope, target];
          const row = await first(`SELECT * FROM mailroom_pauses WHERE ${where}${runner.forUpdate}`, key, tx);
          const domains = row ? decodePause(codec, row).domains : [target];
          await write(...releaseHeld(dialect, projectId, scope, target, domains, now), tx);
          if (!row) return undefined;
          if ((await write(`DELETE FROM mailroom_pauses WHERE ${where}`, key, tx)) === 0) return undefined;
          const pause = decodePause(codec, row);
          if (pause.until !== null && pause.until.getTime() <= now.getTime()) return undefined;
          await writeOutboxIf(ctx, tx, outbox);
          return pause;
        }),
      );
    },

    listPauses({ projectId, now }) {
      return guard('listPauses', async () => {
        const rows =
          projectId === undefined
            ? await all(`SELECT * FROM mailroom_pauses WHERE ${ACTIVE} ORDER BY created_at, scope, target`, [
                now.getTime(),
              ])
            : await all(
                `SELECT * FROM mailroom_pauses WHERE project_id = ? AND ${ACTIVE} ORDER BY created_at, scope, target`,
                [projectId, now.getTime()],
              );
        return rows.map((row) => decodePause(codec, row));
      });
    },
  };
}

/** A claim's condition that `d` is held back by none of `pauses`, with its parameters ('' when none). */
export function notPausedClause(pauses: readonly PauseRecord[]): [string, unknown[]] {
  if (pauses.length === 0) return ['', []];
  const parts: string[] = [];
  const params: unknown[] = [];
  const mailings = pauses.filter((p) => p.scope === 'broadcast').map((p) => p.target);
  const projects = pauses.filter((p) => p.scope === 'project').map((p) => p.projectId);
  if (mailings.length > 0) {
    parts.push(`d.mailing_id NOT IN (${mailings.map(() => '?').join(', ')})`);
    params.push(...mailings);
  }
  if (projects.length > 0) {
    parts.push(`d.project_id NOT IN (${projects.map(() => '?').join(', ')})`);
    params.push(...projects);
  }
  for (const p of pauses) {
    if (p.scope !== 'destination') continue;
    for (const domain of p.domains) {
      // `!` escapes LIKE's wildcards (a domain may hold `_`); the same on every database.
      parts.push(`NOT (d.project_id = ? AND d.address LIKE ? ESCAPE '!')`);
      params.push(p.projectId, atDomain(domain));
    }
  }
  return parts.length === 0 ? ['', []] : [` AND ${parts.join(' AND ')}`, params];
}

/** A destination's domain as a LIKE pattern of the addresses at it (`!` escapes LIKE's wildcards). */
function atDomain(domain: string): string {
  return `%@${domain.replace(/[!%_]/g, (ch) => `!${ch}`)}`;
}

/**
 * The update that makes the deliveries held for a sender-side block that a resumed target covers due at
 * `now` (`PauseStore.removePause`): those still held (`nextAttemptAt`, the hold's deadline, after `now`).
 */
function releaseHeld(
  dialect: SqlDialect,
  projectId: string,
  scope: PauseRecord['scope'],
  target: string,
  domains: readonly string[],
  now: Date,
): [string, unknown[]] {
  const t = now.getTime();
  const params: unknown[] = [
    t,
    t,
    SENDER_BLOCK_HELD,
    SENDER_BLOCK_RESUMED,
    projectId,
    t,
    `%${SENDER_BLOCK_HELD}`,
  ];
  let covers = '';
  if (scope === 'broadcast') {
    covers = ' AND mailing_id = ?';
    params.push(target);
  } else if (scope === 'destination') {
    covers = ` AND (${domains.map(() => "address LIKE ? ESCAPE '!'").join(' OR ') || '1 = 0'})`;
    params.push(...domains.map(atDomain));
  }
  return [
    `UPDATE mailroom_deliveries SET next_attempt_at = ?, updated_at = ?, last_error = REPLACE(last_error, ?, ?)
      WHERE project_id = ?${andOpenAt(dialect)} AND status = 'queued' AND next_attempt_at > ? AND last_error LIKE ?${covers}`,
    params,
  ];
}

/** The pauses in force at `now`, every project's (what a claim passes over). */
export async function activePauses(ctx: SqlContext, now: number): Promise<PauseRecord[]> {
  const rows = await ctx.all(`SELECT * FROM mailroom_pauses WHERE ${ACTIVE}`, [now]);
  return rows.map((row) => decodePause(ctx.codec, row));
}

async function writeOutboxIf(ctx: SqlContext, tx: Db, outbox: OutboxWrite | undefined): Promise<void> {
  if (outbox) await writeOutbox(ctx.runner, ctx.codec, tx, [outbox]);
}

function pauseParams(codec: Codec, p: PauseRecord): unknown[] {
  return [
    p.projectId,
    p.scope,
    p.target,
    codec.json(p.domains),
    p.by,
    p.reason,
    codec.json(p.rule),
    p.createdAt.getTime(),
    ms(p.until),
  ];
}

function decodePause(codec: Codec, row: Row): PauseRecord {
  return {
    projectId: String(row.project_id),
    scope: String(row.scope) as PauseRecord['scope'],
    target: String(row.target),
    domains: codec.fromJson<string[] | null>(row.domains) ?? [],
    by: String(row.paused_by) as PauseRecord['by'],
    reason: row.reason === null || row.reason === undefined ? null : String(row.reason),
    rule: codec.fromJson<PauseRule | null>(row.rule),
    createdAt: new Date(Number(row.created_at)),
    until: row.until_at === null || row.until_at === undefined ? null : new Date(Number(row.until_at)),
  };
}
