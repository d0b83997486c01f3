import type { OutboxWrite } from './event-records.js';
import type { PauseRule, PauseScope } from './pause-records.js';

export type { PauseRule, PauseScope } from './pause-records.js';

/**
 * One active pause. The store keeps at most one per (`projectId`, `scope`, `target`); it persists the
 * record as it is.
 */
export interface PauseRecord {
  projectId: string;
  scope: PauseScope;
  /**
   * What is paused: the mailing id (`broadcast`), the project id (`project`), or the destination's name
   * (`destination`: an opaque key, a domain or a group name).
   */
  target: string;
  /**
   * `destination`: the recipient domains (lower-case) the pause holds back. Empty for the other scopes.
   */
  domains: string[];
  /** Who paused: an operator (API, CLI, dashboard) or the reputation guard. */
  by: 'operator' | 'guard';
  /** Why, in words (an operator's note, or the guard's rule in words). */
  reason: string | null;
  /** The guard's rule and its figures; null for an operator's pause. */
  rule: PauseRule | null;
  createdAt: Date;
  /** When the pause ends by itself (a destination's timed pause); null: until resumed. */
  until: Date | null;
}

/**
 * The role of a `Store` that keeps pauses. A pause changes no delivery: while it is active,
 * `DeliveryQueue.claimDeliveries` and `nextDueAt` pass over the deliveries it covers (see there), so that
 * resuming continues exactly where it stopped, with every delivery's `nextAttemptAt` kept. Every rule of
 * `Store` (store.ts) applies.
 */
export interface PauseStore {
  /**
   * Write `pause` unless an active pause (its `until` null or after `now`) exists for its `projectId`,
   * `scope` and `target`; an expired one is replaced. Returns true when written; the `outbox` (the
   * `broadcast.paused` event) is inserted in the same transaction, and only then.
   *
   * Race guarantee: of concurrent calls for one (project, scope, target), exactly one returns true.
   */
  addPause(pause: PauseRecord, now: Date, outbox?: OutboxWrite): Promise<boolean>;
  /**
   * Remove the active pause of (`projectId`, `scope`, `target`), if any, and return it; the `outbox`
   * (the `broadcast.resumed` event) is inserted in the same transaction, and only when one was removed.
   * An expired pause is removed too but not returned (it had ended by itself).
   *
   * In the same transaction, whether or not a pause was in force, it releases the deliveries held for a
   * sender-side block that the target covers: `queued`, `lastError` ending with `SENDER_BLOCK_HELD`, and
   * `nextAttemptAt` (the hold's deadline) after `now`; of the mailing `target` (`broadcast`), of the
   * project (`project`), or of the project whose address ends with `@` and one of the pause's `domains`
   * (`destination`; `[target]` when no pause row is left). Each gets `nextAttemptAt = now` and
   * `SENDER_BLOCK_HELD` replaced by `SENDER_BLOCK_RESUMED` in its `lastError`; nothing else changes.
   *
   * Race guarantee: of concurrent calls for one pause, exactly one returns it.
   */
  removePause(
    projectId: string,
    scope: PauseScope,
    target: string,
    now: Date,
    outbox?: OutboxWrite,
  ): Promise<PauseRecord | undefined>;
  /**
   * The active pauses (`until` null or after `now`) of `projectId`, or of every project when it is
   * undefined, oldest first (then by scope and target).
   */
  listPauses(query: { projectId?: string; now: Date }): Promise<PauseRecord[]>;
}
