import { statfsSync } from 'node:fs';
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

/** How long a free-space reading is reused: `statfs` is cheap, but an accept burst need not repeat it. */
const READ_EVERY_MS = 100;

/** The reserve of one SQLite file (see {@link sqliteReserve}). */
export interface SqliteReserve {
  /**
   * Throws `STORAGE_FULL` when the filesystem's free space is below the reserve; `operation` names the
   * refused write in the message. Before refusing, `reclaim` is given one chance to free space (a WAL
   * truncation) at most once a second.
   */
  check(operation: string): void;
  /** Free bytes on the file's filesystem now (for unprivileged writers: `bavail`). */
  freeBytes(): number;
}

/**
 * The free-space floor of the SQLite file at `path`, checked before accepting new mail (not before the
 * worker's writes, which record what was already accepted and must always find room). `reserveMiB` 0
 * turns it off.
 */
export function sqliteReserve(path: string, reserveMiB: number, reclaim: () => void): SqliteReserve {
  const directory = dirname(path);
  const reserve = Math.max(0, reserveMiB) * 1024 * 1024;
  let readAt = Number.NEGATIVE_INFINITY;
  let free = Number.POSITIVE_INFINITY;
  let reclaimedAt = Number.NEGATIVE_INFINITY;

  const freeBytes = (): number => {
    const stats = statfsSync(directory);
    return stats.bavail * stats.bsize;
  };
  const read = (now: number): number => {
    if (now - readAt >= READ_EVERY_MS) {
      free = freeBytes();
      readAt = now;
    }
    return free;
  };

  return {
    freeBytes,
    check(operation) {
      if (reserve === 0) return;
      const now = performance.now();
      if (read(now) >= reserve) return;
      if (now - reclaimedAt >= 1000) {
        reclaimedAt = now;
        try {
          reclaim();
        } catch {
          // Reclaiming is a chance, not a promise: the reading below decides.
        }
        readAt = Number.NEGATIVE_INFINITY;
        if (read(now) >= reserve) return;
      }
      throw new MailroomError(
        'STORAGE_FULL',
        `${operation}: ${mib(free)} MiB free on the database's disk, below the reserve of ${mib(reserve)} MiB kept for delivering accepted mail`,
        { source: 'sql:sqlite' },
      );
    },
  };
}

function mib(bytes: number): string {
  return (bytes / (1024 * 1024)).toFixed(1);
}
