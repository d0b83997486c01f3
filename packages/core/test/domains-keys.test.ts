import { createPrivateKey, createPublicKey, sign, verify } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { isMailroomError } from '../src/base/errors.js';
import { checkSelector, dkimPublicKeyOf, generateDkimKey, newSelector } from '../src/domains/dkim-key.js';
import { openKey, sealKey } from '../src/domains/sealed-key.js';

const SECRET = 'an-installation-secret-of-32-chars';

/** The public key a DKIM record's p= names, as a receiver rebuilds it. */
function publicKeyFromRecord(p: string, algorithm: 'rsa' | 'ed25519') {
  const der = Buffer.from(p, 'base64');
  const spki =
    algorithm === 'ed25519' ? Buffer.concat([Buffer.from('302a300506032b6570032100', 'hex'), der]) : der;
  return createPublicKey({ key: spki, format: 'der', type: 'spki' });
}

describe('generateDkimKey', () => {
  it('makes an RSA 2048 key whose p= verifies what the private key signs', async () => {
    const key = await generateDkimKey();
    expect(key.algorithm).toBe('rsa');
    const privateKey = createPrivateKey(key.privateKey);
    expect(privateKey.asymmetricKeyType).toBe('rsa');
    expect(privateKey.asymmetricKeyDetails?.modulusLength).toBe(2048);
    expect(key.privateKey).toMatch(/^-----BEGIN PRIVATE KEY-----\n/);
    const data = Buffer.from('header fields');
    expect(
      verify('sha256', data, publicKeyFromRecord(key.publicKey, 'rsa'), sign('sha256', data, privateKey)),
    ).toBe(true);
  });

  it('makes an Ed25519 key whose p= is the bare 32-byte key (RFC 8463)', async () => {
    const key = await generateDkimKey('ed25519');
    expect(key.algorithm).toBe('ed25519');
    expect(Buffer.from(key.publicKey, 'base64')).toHaveLength(32);
    const privateKey = createPrivateKey(key.privateKey);
    const data = Buffer.from('a sha256 digest');
    expect(
      verify(null, data, publicKeyFromRecord(key.publicKey, 'ed25519'), sign(null, data, privateKey)),
    ).toBe(true);
  });

  it('makes a new key every time', async () => {
    const [a, b] = await Promise.all([generateDkimKey('ed25519'), generateDkimKey('ed25519')]);
    expect(a.publicKey).not.toBe(b.publicKey);
  });
});

describe('dkimPublicKeyOf', () => {
  it('gives the p= of a PEM the user brings', async () => {
    const rsa = await generateDkimKey('rsa');
    expect(dkimPublicKeyOf(rsa.privateKey)).toEqual({ algorithm: 'rsa', publicKey: rsa.publicKey });
    const ed = await generateDkimKey('ed25519');
    expect(dkimPublicKeyOf(ed.privateKey)).toEqual({ algorithm: 'ed25519', publicKey: ed.publicKey });
  });

  it('refuses what is not an RSA or Ed25519 private key', () => {
    expect(() => dkimPublicKeyOf('not a key')).toThrow(/not a valid PEM private key/);
  });
});

describe('selectors', () => {
  const day = new Date('2026-08-29T23:59:00Z');

  it('names a key by its UTC day, Ed25519 with an e', () => {
    expect(newSelector(day, 'rsa')).toBe('mr20260829');
    expect(newSelector(day, 'ed25519')).toBe('mr20260829e');
  });

  it('never reuses a taken selector', () => {
    expect(newSelector(day, 'rsa', ['mr20260829'])).toBe('mr20260829-2');
    expect(newSelector(day, 'rsa', ['mr20260829', 'mr20260829-2'])).toBe('mr20260829-3');
  });

  it('takes a user selector that is DNS labels, lower-cased', () => {
    expect(checkSelector('Mail2026')).toBe('mail2026');
    expect(checkSelector('a.b')).toBe('a.b');
    for (const bad of ['', 'a_b', '-a', 'a b', 'a..b', 's._domainkey', 'x'.repeat(64)]) {
      expect(() => checkSelector(bad), bad).toThrow(/is not made of DNS labels/);
    }
  });
});

describe('sealed keys', () => {
  const pem = '-----BEGIN PRIVATE KEY-----\nMC4CAQAwBQYDK2VwBCIEI...\n-----END PRIVATE KEY-----\n';

  it('opens with the same secret and label, and never shows the key', () => {
    const sealed = sealKey(pem, SECRET, 'acme.com/mr20260829');
    expect(sealed).toMatch(/^mrk1\.[\w-]+\.[\w-]+\.[\w-]+\.[\w-]+$/);
    expect(sealed).not.toContain('PRIVATE');
    expect(openKey(sealed, SECRET, 'acme.com/mr20260829')).toBe(pem);
  });

  it('seals the same key differently every time (fresh salt and IV)', () => {
    expect(sealKey(pem, SECRET, 'l')).not.toBe(sealKey(pem, SECRET, 'l'));
  });

  function refusal(run: () => unknown): string {
    try {
      run();
    } catch (error) {
      if (isMailroomError(error)) return `${error.code}: ${error.message}`;
      throw error;
    }
    throw new Error('it opened');
  }

  it('does not open with another secret, another label, altered bytes or a cut tag', () => {
    const label = 'acme.com/mr20260829';
    const sealed = sealKey(pem, SECRET, label);
    const [version, salt, iv, tag, ciphertext] = sealed.split('.') as [
      string,
      string,
      string,
      string,
      string,
    ];
    expect(refusal(() => openKey(sealed, `${SECRET}!`, label))).toMatch(
      /^INTERNAL: .*acme\.com\/mr20260829 does not open/,
    );
    expect(refusal(() => openKey(sealed, SECRET, 'other.com/mr20260829'))).toMatch(/does not open/);
    const flipped = Buffer.from(ciphertext, 'base64url');
    flipped[0] = (flipped[0] ?? 0) ^ 1;
    const altered = [version, salt, iv, tag, flipped.toString('base64url')].join('.');
    expect(refusal(() => openKey(altered, SECRET, label))).toMatch(/does not open/);
    const cut = [
      version,
      salt,
      iv,
      Buffer.from(tag, 'base64url').subarray(0, 4).toString('base64url'),
      ciphertext,
    ].join('.');
    expect(refusal(() => openKey(cut, SECRET, label))).toMatch(/does not open/);
    expect(refusal(() => openKey(`mrk9.${sealed.slice(5)}`, SECRET, label))).toMatch(
      /is not a sealed key of this version/,
    );
  });

  it('refuses a short secret before using it', () => {
    expect(refusal(() => sealKey(pem, 'short', 'l'))).toMatch(/^VALIDATION_FAILED: .*at least 16 characters/);
    expect(refusal(() => openKey(sealKey(pem, SECRET, 'l'), 'short', 'l'))).toMatch(/^VALIDATION_FAILED/);
  });
});
