import { createPrivateKey, createPublicKey, generateKeyPair } from 'node:crypto';
import { promisify } from 'node:util';
import { MailroomError } from '../base/errors.js';
import type { DkimAlgorithm } from '../store/domain-types.js';

const generate = promisify(generateKeyPair);

export type { DkimAlgorithm } from '../store/domain-types.js';

/** A DKIM key pair made for a domain. The private half never leaves the engine unsealed. */
export interface DkimKeyPair {
  /** `rsa` or `ed25519`. */
  readonly algorithm: DkimAlgorithm;
  /**
   * The public key as the TXT record's `p=` tag carries it, in base64: the DER SubjectPublicKeyInfo for
   * RSA (RFC 6376 3.6.1), the bare 32-byte key for Ed25519 (RFC 8463 4.2).
   */
  readonly publicKey: string;
  /** The private key in PKCS #8 PEM, what the signer takes. Seal it before it is stored. */
  readonly privateKey: string;
}

/** The size of generated RSA keys: what Gmail and Yahoo ask of bulk senders, and fits one TXT record. */
export const DKIM_RSA_BITS = 2048;

/** A selector: one or more DNS labels of letters, digits and hyphens (RFC 6376 3.1). */
const SELECTOR = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)*$/;

/**
 * A new key pair, made off the main thread (an RSA key takes long enough to stall a busy event loop).
 * @default algorithm 'rsa'
 */
export async function generateDkimKey(algorithm: DkimAlgorithm = 'rsa'): Promise<DkimKeyPair> {
  const { privateKey, publicKey } =
    algorithm === 'rsa'
      ? await generate('rsa', { modulusLength: DKIM_RSA_BITS })
      : await generate('ed25519', {});
  return {
    algorithm,
    publicKey: dkimPublicKey(publicKey.export({ type: 'spki', format: 'der' }), algorithm),
    privateKey: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
  };
}

/**
 * The `p=` value of a private key in PEM (to show the record of a key given by the user).
 * @throws MailroomError `VALIDATION_FAILED` when the PEM is not an RSA or Ed25519 private key.
 */
export function dkimPublicKeyOf(privateKeyPem: string): { algorithm: DkimAlgorithm; publicKey: string } {
  let type: string | undefined;
  let spki: Buffer;
  try {
    const key = createPrivateKey(privateKeyPem);
    type = key.asymmetricKeyType;
    spki = createPublicKey(key).export({ type: 'spki', format: 'der' });
  } catch (cause) {
    throw new MailroomError('VALIDATION_FAILED', 'The DKIM key is not a valid PEM private key', {
      cause,
      issues: [{ code: 'custom', path: ['dkim', 'privateKey'], message: 'Not a valid PEM private key' }],
    });
  }
  if (type !== 'rsa' && type !== 'ed25519') {
    const message = `DKIM keys are RSA or Ed25519, not ${String(type)}`;
    throw new MailroomError('VALIDATION_FAILED', message, {
      issues: [{ code: 'custom', path: ['dkim', 'privateKey'], message }],
    });
  }
  return { algorithm: type, publicKey: dkimPublicKey(spki, type) };
}

/**
 * A selector for a key made on `date`: `mr` and the UTC date (`mr20260829`), `e` appended for Ed25519 so
 * both keys of a dual-signing domain can be made the same day; `-2`, `-3`... when the name is `taken`
 * (a second rotation that day). Dated selectors tell at a glance how old a published key is.
 */
export function newSelector(date: Date, algorithm: DkimAlgorithm, taken: Iterable<string> = []): string {
  const day = date.toISOString().slice(0, 10).replaceAll('-', '');
  const base = `mr${day}${algorithm === 'ed25519' ? 'e' : ''}`;
  const used = new Set(taken);
  if (!used.has(base)) return base;
  for (let n = 2; ; n++) {
    const candidate = `${base}-${n}`;
    if (!used.has(candidate)) return candidate;
  }
}

/**
 * A selector chosen by the user, lower-cased.
 * @throws MailroomError `VALIDATION_FAILED` unless it is one or more DNS labels of letters, digits and
 * hyphens, 63 characters at most (no underscore: `_domainkey` follows it).
 */
export function checkSelector(selector: string): string {
  const lower = typeof selector === 'string' ? selector.trim().toLowerCase() : '';
  if (!SELECTOR.test(lower) || lower.length > 63) {
    const message = `The DKIM selector ${JSON.stringify(selector)} is not made of DNS labels (letters, digits and hyphens, 63 characters at most)`;
    throw new MailroomError('VALIDATION_FAILED', message, {
      issues: [{ code: 'custom', path: ['selector'], message }],
    });
  }
  return lower;
}

function dkimPublicKey(spki: Buffer, algorithm: DkimAlgorithm): string {
  // An Ed25519 SubjectPublicKeyInfo is a fixed 12-byte prefix and the 32-byte key.
  return (algorithm === 'ed25519' ? spki.subarray(-32) : spki).toString('base64');
}
