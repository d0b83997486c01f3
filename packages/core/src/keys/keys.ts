import { MailroomError } from '../base/errors.js';
import type { AuthContext } from '../context/auth-context.js';
import type { BaseContext } from '../context/base-context.js';
import type { ApiKeyRecord } from '../store/records.js';
import { normalizeKeyDomains } from './key-domains.js';
import { KEY_SCOPES, type KeyScope } from './key-scope.js';
import type { MailroomKeys } from './key-types.js';
import { keyState, keyView } from './key-view.js';
import { newKey } from './new-key.js';

/** The longest grace period of a rotation: 30 days. */
export const MAX_GRACE_SECONDS = 30 * 24 * 3600;

/**
 * A project's API keys: create, list, revoke, rotate. Secrets are made here, returned once, and stored only
 * as digests (`base/secrets.ts`).
 */
export function createKeys(
  ctx: BaseContext,
  resolveAuth: (auth: string | AuthContext) => Promise<AuthContext>,
): MailroomKeys {
  const { store, clock } = ctx;

  const find = async (projectId: string, id: string): Promise<ApiKeyRecord> => {
    const key = typeof id === 'string' ? await store.getKey(projectId, id) : undefined;
    if (!key) throw new MailroomError('NOT_FOUND', `Key ${String(id)} not found`);
    return key;
  };

  /**
   * The caller's project, refused (403) when it acts with a key in its rotation grace period: a key being
   * retired must not mint, rotate or revoke keys (it could make itself a successor that never expires). The
   * key is read again, since a dashboard session's context may predate the rotation.
   */
  const manager = async (auth: string | AuthContext): Promise<AuthContext> => {
    const context = await resolveAuth(auth);
    if (!context.key) return context;
    const key = await store.getKey(context.project.id, context.key.id);
    if (!key || keyState(key, clock.now()) !== 'active') {
      throw new MailroomError(
        'FORBIDDEN',
        'This key is rotated (in its grace period): it cannot create, rotate or revoke keys; use its replacement',
      );
    }
    return context;
  };

  return {
    async create(auth, options) {
      const { project } = await manager(auth);
      const scope = checkScope(options?.scope);
      const domains = normalizeKeyDomains(options.domains as readonly unknown[] | undefined);
      const mode = options.mode ?? 'live';
      if (mode !== 'live' && mode !== 'sandbox') {
        throw invalid(['mode'], 'mode must be live or sandbox');
      }
      const name = checkName(options.name);
      const now = clock.now();
      const { key, secret } = newKey(project.id, { scope, domains, mode, name }, now);
      await store.addProjectSecret(key);
      return { key: keyView(key, now), secret };
    },

    async list(auth) {
      const { project } = await resolveAuth(auth);
      const now = clock.now();
      return (await store.listKeys(project.id)).map((key) => keyView(key, now));
    },

    async revoke(auth, id) {
      const { project } = await manager(auth);
      const revoked = await store.revokeKey(project.id, id, clock.now());
      if (!revoked) throw new MailroomError('NOT_FOUND', `Key ${id} not found`);
      return keyView(revoked, clock.now());
    },

    async rotate(auth, id, options = {}) {
      const { project } = await manager(auth);
      const grace = options.graceSeconds ?? 0;
      if (!(Number.isInteger(grace) && grace >= 0 && grace <= MAX_GRACE_SECONDS)) {
        throw invalid(['graceSeconds'], `graceSeconds must be a whole number from 0 to ${MAX_GRACE_SECONDS}`);
      }
      const old = await find(project.id, id);
      const now = clock.now();
      const { key, secret } = newKey(project.id, old, now);
      const expiresAt = new Date(now.getTime() + grace * 1000);
      if (!(await store.rotateKey(project.id, old.id, key, expiresAt, now))) {
        throw new MailroomError('CONFLICT', `Key ${id} is revoked, expired or rotated already`);
      }
      return {
        key: keyView(key, now),
        secret,
        previous: keyView({ ...old, expiresAt, replacedBy: key.id }, now),
      };
    },
  };
}

/** The scope named, or `VALIDATION_FAILED` naming the field. */
function checkScope(scope: unknown): KeyScope {
  if (typeof scope === 'string' && (KEY_SCOPES as readonly string[]).includes(scope))
    return scope as KeyScope;
  throw invalid(['scope'], `scope must be one of ${KEY_SCOPES.join(', ')}`);
}

/** The longest key name. */
export const MAX_KEY_NAME_LENGTH = 100;

/** The key's name, trimmed (none: null), or `VALIDATION_FAILED` naming the field. */
function checkName(name: unknown): string | null {
  if (name === undefined || name === null) return null;
  const trimmed = typeof name === 'string' ? name.trim() : undefined;
  // One line of text: no control character (line breaks, tabs, escapes).
  if (
    trimmed === undefined ||
    trimmed === '' ||
    trimmed.length > MAX_KEY_NAME_LENGTH ||
    /\p{Cc}/u.test(trimmed)
  ) {
    throw invalid(['name'], `name must be 1 to ${MAX_KEY_NAME_LENGTH} characters of one line`);
  }
  return trimmed;
}

function invalid(path: string[], message: string): MailroomError {
  return new MailroomError('VALIDATION_FAILED', message, { issues: [{ code: 'custom', path, message }] });
}
