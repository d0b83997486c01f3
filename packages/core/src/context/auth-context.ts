import type { KeyScope, ProjectRecord, SecretMode } from '../store/records.js';

/** The project a request acts for, after authentication. */
export interface AuthContext {
  project: ProjectRecord;
  /** `sandbox` secrets are accepted and recorded, never delivered. */
  mode: SecretMode;
  /**
   * The key that authenticated the request (`mailroom.authenticate` always sets it). Absent for an
   * in-process caller acting for the project (the CLI, an app): it acts with every right, from any sender.
   */
  key?: AuthKey;
}

/** What the authenticating key may do: its scope (checked by the HTTP layer) and sender domains. */
export interface AuthKey {
  /** `key_…` */
  id: string;
  scope: KeyScope;
  /** Sender domains the key may send from; empty: any sender of the project (checked at accept). */
  domains: readonly string[];
}
