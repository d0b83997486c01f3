import { statfsSync, statSync } from 'node:fs';
import { dirname } from 'node:path';
import { MailroomError } from '@mailroom/core';

/**
 * Free space the store keeps on a SQLite file's filesystem by default, in MiB: room for the worker to
 * record the outcomes, events and webhook messages of everything already accepted (each sent message adds
 * an outcome, an event row and its WAL frames until the next checkpoint), the WAL's growth between
 * checkpoints (a few MiB under load, see `sqliteThread`), and a checkpoint's copy into the database file.
 * The same idea as Postfix's `queue_minfree`; 64 MiB is what a broadcast of a few hundred thousand
 * outcomes writes, and little on any disk a server has.
 */
export const DEFAULT_SQLITE_RESERVE_MIB = 64;

/** The reserve of one SQLite file (see {@link sqliteReserve}). */
export interface SqliteReserve {
  /**
   * Throws `STORAGE_FULL` when the filesystem's free space, less the WAL file's size, is below the
   * reserve; `operation` names the refused write in the message. Before refusing, `reclaim` is given one
   * chance to free space (a WAL truncation) at most once a second.
   */
  check(operation: string): void;
  /** Free bytes on the file's filesystem now (for unprivileged writers: `bavail`). */
  freeBytes(): number;
}

/**
 * The free-space floor of the SQLite file at `path`, checked before accepting new mail (not before the
 * worker's writes, which record what was already accepted and must always find room). `reserveMiB` 0
 * turns it off.
 *
 * The WAL file's size counts as spent: checkpointing it copies its pages into the database file, which
 * grows by up to as much before the WAL can be cut, so a disk whose free space is all WAL cannot
 * checkpoint and stays full. The space is read on every check (two `stat` calls, microseconds beside a
 * write transaction): a fast client writes megabytes between two readings of a cached value, more than
 * a small reserve.
 */
export function sqliteReserve(path: string, reserveMiB: number, reclaim: () => void): SqliteReserve {
  const directory = dirname(path);
  const wal = `${path}-wal`;
  const reserve = Math.max(0, reserveMiB) * 1024 * 1024;
  let reclaimedAt = Number.NEGATIVE_INFINITY;

  const freeBytes = (): number => {
    const stats = statfsSync(directory);
    return stats.bavail * stats.bsize;
  };
  const available = (): number => freeBytes() - (statSync(wal, { throwIfNoEntry: false })?.size ?? 0);

  return {
    freeBytes,
    check(operation) {
      if (reserve === 0) return;
      let free = available();
      if (free >= reserve) return;
      const now = performance.now();
      if (now - reclaimedAt >= 1000) {
        reclaimedAt = now;
        try {
          reclaim();
        } catch {
          // Reclaiming is a chance, not a promise: the reading below decides.
        }
        free = available();
        if (free >= reserve) return;
      }
      throw new MailroomError(
        'STORAGE_FULL',
        `${operation}: ${mib(Math.max(0, free))} MiB free on the database's disk (less its WAL), below the reserve of ${mib(reserve)} MiB kept for delivering accepted mail`,
        { source: 'sql:sqlite' },
      );
    },
  };
}

function mib(bytes: number): string {
  return (bytes / (1024 * 1024)).toFixed(1);
}
