import {
  type PauseRecord,
  type PauseScope,
  type PauseStore,
  SENDER_BLOCK_HELD,
  SENDER_BLOCK_RESUMED,
} from '@mailroom/core';
import { clone } from '../memory-copy.js';
import type { State } from '../memory-state.js';
import { compare, key } from '../memory-state.js';
import { writeOutbox } from './event-store.js';

/** `PauseStore` in memory: one map keyed by project, scope and target. */
export function memoryPauseStore(db: () => State): PauseStore {
  return {
    async addPause(pause, now, outbox) {
      const s = db();
      const k = pauseKey(pause.projectId, pause.scope, pause.target);
      const current = s.pauses.get(k);
      if (current && isActive(current, now.getTime())) return false;
      s.pauses.set(k, clone(pause));
      writeOutbox(s.outbox, outbox);
      return true;
    },
    async removePause(projectId, scope, target, now, outbox) {
      const s = db();
      const k = pauseKey(projectId, scope, target);
      const current = s.pauses.get(k);
      releaseHeld(s, projectId, scope, target, current?.domains ?? [target], now);
      if (!current) return undefined;
      s.pauses.delete(k);
      if (!isActive(current, now.getTime())) return undefined;
      writeOutbox(s.outbox, outbox);
      return clone(current);
    },
    async listPauses({ projectId, now }) {
      const t = now.getTime();
      return [...db().pauses.values()]
        .filter((p) => (projectId === undefined || p.projectId === projectId) && isActive(p, t))
        .sort(
          (a, b) =>
            a.createdAt.getTime() - b.createdAt.getTime() ||
            compare(a.scope, b.scope) ||
            compare(a.target, b.target),
        )
        .map((p) => clone(p));
    },
  };
}

/**
 * Makes the deliveries held for a sender-side block that the target covers due at `now` (those whose
 * hold has not ended: `nextAttemptAt` after `now`), as `PauseStore.removePause` says.
 */
function releaseHeld(
  s: State,
  projectId: string,
  scope: PauseScope,
  target: string,
  domains: readonly string[],
  now: Date,
): void {
  const t = now.getTime();
  for (const d of s.deliveries.values()) {
    if (d.status !== 'queued' || d.projectId !== projectId || d.nextAttemptAt.getTime() <= t) continue;
    if (!d.lastError?.endsWith(SENDER_BLOCK_HELD)) continue;
    const covered =
      scope === 'project' ||
      (scope === 'broadcast' && d.mailingId === target) ||
      (scope === 'destination' && domains.some((domain) => d.address.endsWith(`@${domain}`)));
    if (!covered) continue;
    d.nextAttemptAt = new Date(t);
    d.lastError = d.lastError.replace(SENDER_BLOCK_HELD, SENDER_BLOCK_RESUMED);
    d.updatedAt = new Date(t);
  }
}

/** Whether the delivery (of `projectId` and `mailingId`, to `address`) is held back by an active pause. */
export function isHeldByPause(
  s: State,
  d: { projectId: string; mailingId: string; address: string },
  t: number,
): boolean {
  if (s.pauses.size === 0) return false;
  for (const p of s.pauses.values()) {
    if (p.projectId !== d.projectId || !isActive(p, t)) continue;
    if (p.scope === 'project') return true;
    if (p.scope === 'broadcast' && p.target === d.mailingId) return true;
    if (p.scope === 'destination' && p.domains.some((domain) => d.address.endsWith(`@${domain}`)))
      return true;
  }
  return false;
}

function isActive(p: PauseRecord, t: number): boolean {
  return p.until === null || p.until.getTime() > t;
}

function pauseKey(projectId: string, scope: PauseScope, target: string): string {
  return key(key(projectId, scope), target);
}
