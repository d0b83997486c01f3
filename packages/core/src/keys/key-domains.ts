import { MailroomError } from '../base/errors.js';
import type { AuthContext } from '../context/auth-context.js';
import { normalizeDomain } from '../domains/domain-name.js';

/** A key's domain list, normalised and without repeats; a malformed entry is refused naming its index. */
export function normalizeKeyDomains(domains: readonly unknown[] | undefined): string[] {
  if (domains === undefined) return [];
  if (!Array.isArray(domains)) {
    throw new MailroomError('VALIDATION_FAILED', 'domains must be a list of domain names', {
      issues: [{ code: 'invalid_type', path: ['domains'], message: 'Expected an array of domain names' }],
    });
  }
  const out = new Set<string>();
  domains.forEach((domain, i) => {
    try {
      out.add(normalizeDomain(domain as string));
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      throw new MailroomError('VALIDATION_FAILED', `domains[${i}]: ${message}`, {
        issues: [{ code: 'custom', path: ['domains', i], message }],
      });
    }
  });
  return [...out];
}

/**
 * Refuses (403 `SENDER_NOT_ALLOWED`, the field `sender` named) a sender outside the domains the
 * authenticating key is limited to. A key with no domain list, and an in-process caller, send from any
 * sender of the project.
 */
export function assertKeySender(auth: AuthContext, senderAddress: string): void {
  const domains = auth.key?.domains;
  if (!domains || domains.length === 0) return;
  const domain = senderAddress.slice(senderAddress.lastIndexOf('@') + 1).toLowerCase();
  if (domains.includes(domain)) return;
  const message = `sender ${senderAddress} is outside the domains this key may send from (${domains.join(', ')})`;
  throw new MailroomError('SENDER_NOT_ALLOWED', message, {
    issues: [{ code: 'custom', path: ['sender'], message }],
  });
}
