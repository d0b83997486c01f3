import type { AuthContext } from '../context/auth-context.js';
import type { SecretMode } from '../store/records.js';
import type { KeyScope } from './key-scope.js';

/** A project key as the API shows it: everything but its secret and digest. */
export interface KeyView {
  /** `key_…`: what revoke and rotate name the key by. */
  id: string;
  /** The secret's first characters (`sk_live_AbCd`), to tell keys apart. */
  prefix: string;
  /** What the key is for (`CI`, `marketing site`); null when it was made without a name. */
  name: string | null;
  mode: SecretMode;
  scope: KeyScope;
  /** Sender domains the key may send from; empty: any sender of the project. */
  domains: string[];
  /** `active`; `expiring` (rotated, in its grace period); `expired`; `revoked`. */
  state: 'active' | 'expiring' | 'expired' | 'revoked';
  createdAt: Date;
  /** To the minute at best: the engine notes a key's use at most once a minute. */
  lastUsedAt: Date | null;
  revokedAt: Date | null;
  /** The end of a rotated key's grace period. */
  expiresAt: Date | null;
  /** The key that replaced this one in a rotation. */
  replacedBy: string | null;
}

/** What a new key may do. */
export interface CreateKeyOptions {
  /** `full` (everything), `sending` (the send endpoints only) or `read` (reads only). */
  scope: KeyScope;
  /**
   * Sender domains the key may send from (`example.com`: senders `…@example.com` only); none: any sender of
   * the project.
   * @default []
   */
  domains?: readonly string[];
  /**
   * `sandbox` keys are accepted and recorded, never delivered.
   * @default 'live'
   */
  mode?: SecretMode;
  /**
   * What the key is for (`CI`, `marketing site`), shown in lists and the dashboard: 1 to 100 characters,
   * no line breaks. A rotation passes it on to the new key.
   * @default no name
   */
  name?: string;
}

/** How a rotation ends the old key. */
export interface RotateKeyOptions {
  /**
   * Seconds the old key keeps working after the rotation (0: it stops at once), at most 30 days.
   * @default 0
   */
  graceSeconds?: number;
}

/** A key just made: its secret is shown here once and never again. */
export interface CreatedKey {
  key: KeyView;
  secret: string;
}

/** A rotation's outcome: the new key (its secret shown once) and the old one, now expiring. */
export interface RotatedKey extends CreatedKey {
  previous: KeyView;
}

/** A project's API keys (`mailroom.keys`); each call acts for the project of `auth`. */
export interface MailroomKeys {
  /**
   * Make a key. `VALIDATION_FAILED` for an unknown scope or a malformed domain (the field named). Like
   * `revoke` and `rotate`: `FORBIDDEN` when `auth` is a key in its rotation grace period.
   */
  create(auth: string | AuthContext, options: CreateKeyOptions): Promise<CreatedKey>;
  /** The project's keys, oldest first, revoked and expired ones included. */
  list(auth: string | AuthContext): Promise<KeyView[]>;
  /** Revoke a key at once (it answers 401 from now on); `NOT_FOUND` when the project has no such key. */
  revoke(auth: string | AuthContext, id: string): Promise<KeyView>;
  /**
   * Replace a key by a new one of the same scope, domains and mode; the old one keeps working for
   * `graceSeconds`, then answers 401. `CONFLICT` for a key revoked, expired or rotated already;
   * `NOT_FOUND` when the project has no such key.
   */
  rotate(auth: string | AuthContext, id: string, options?: RotateKeyOptions): Promise<RotatedKey>;
}
