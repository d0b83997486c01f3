import type { ApiKeyRecord } from './records.js';

/**
 * A project's API keys after they are made: list, revoke, rotate, and the note of their last use. Keys are
 * added by `AccountStore.createProject` (the first) and `AccountStore.addProjectSecret`, and found by
 * `AccountStore.findSecret` on every request. Every rule of `Store` (store.ts) applies.
 */
export interface KeyStore {
  /** The project's keys, revoked and expired ones included, oldest first (then by id). */
  listKeys(projectId: string): Promise<ApiKeyRecord[]>;

  /** The key `id` of the project; `undefined` when there is none (or it is another project's). */
  getKey(projectId: string, id: string): Promise<ApiKeyRecord | undefined>;

  /**
   * Revoke the key `id` of the project: set `revokedAt` to `at` unless it is set already. Returns the key as
   * stored afterwards, or `undefined` when the project has no such key.
   *
   * Race guarantee: of concurrent revocations of one key, the first to write sets `revokedAt`; every caller
   * gets the key with that same time.
   */
  revokeKey(projectId: string, id: string, at: Date): Promise<ApiKeyRecord | undefined>;

  /**
   * Rotate the key `id` of the project, atomically: set its `expiresAt` to `expiresAt` and its
   * `replacedBy` to `replacement.id`, and insert `replacement` (a key of the same project). Only a key
   * still in use rotates: not revoked, not replaced already, and not expired at `now`. Returns `true` when
   * it rotated, `false` (writing nothing) otherwise, or when the project has no such key.
   *
   * Race guarantee: of concurrent rotations of one key, exactly one returns `true`, and only its
   * replacement is stored.
   */
  rotateKey(
    projectId: string,
    id: string,
    replacement: ApiKeyRecord,
    expiresAt: Date,
    now: Date,
  ): Promise<boolean>;

  /**
   * Note that the key `id` was used at `at`: set `lastUsedAt` to `at` when it is null or earlier. One
   * write, no read; nothing when there is no such key. The engine calls it at most once a minute per key.
   *
   * Race guarantee: `lastUsedAt` only moves forward: of concurrent calls, the latest time stays.
   */
  touchKey(id: string, at: Date): Promise<void>;
}
