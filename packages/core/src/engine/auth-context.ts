import type { ProjectRecord, SecretMode } from '../store/records.js';

/** The project a request acts for, after authentication. */
export interface AuthContext {
  project: ProjectRecord;
  /** `sandbox` secrets are accepted and recorded, never delivered. */
  mode: SecretMode;
}
