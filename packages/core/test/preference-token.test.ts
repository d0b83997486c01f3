import { describe, expect, it } from 'vitest';
import {
  openPreferenceToken,
  PREFERENCE_CSRF_TTL_MS,
  sealPreferenceToken,
  signPreferenceCsrf,
  verifyPreferenceCsrf,
} from '../src/unsubscribe/preference-token.js';

const SECRET = 'a-test-secret-of-32-characters!!';
const ANN = { projectId: 'prj_1', address: 'ann@example.test' };

describe('preference tokens', () => {
  it('are the same for one contact, differ between contacts, and hide the address', () => {
    const token = sealPreferenceToken(SECRET, ANN);
    expect(token).toMatch(/^p1\.[A-Za-z0-9_-]+$/);
    expect(sealPreferenceToken(SECRET, ANN)).toBe(token);
    expect(sealPreferenceToken(SECRET, { ...ANN, address: 'bob@example.test' })).not.toBe(token);
    expect(sealPreferenceToken(SECRET, { ...ANN, projectId: 'prj_2' })).not.toBe(token);
    expect(Buffer.from(token.slice(3), 'base64url').toString('latin1')).not.toContain('ann');
    expect(openPreferenceToken(SECRET, token)).toEqual(ANN);
  });

  it('opens nothing altered, truncated, foreign or malformed', () => {
    const token = sealPreferenceToken(SECRET, ANN);
    const body = token.slice(3);
    for (let i = 0; i < body.length; i++) {
      const c = body[i] === 'A' ? 'B' : 'A';
      expect(openPreferenceToken(SECRET, `p1.${body.slice(0, i)}${c}${body.slice(i + 1)}`)).toBeUndefined();
    }
    expect(openPreferenceToken(SECRET, token.slice(0, -2))).toBeUndefined();
    expect(openPreferenceToken('another-secret-of-32-characters!', token)).toBeUndefined();
    for (const bad of ['', 'p1.', 'p2.abc', `${token}=`, `x${token}`]) {
      expect(openPreferenceToken(SECRET, bad)).toBeUndefined();
    }
  });
});

describe('preference page CSRF tokens', () => {
  const token = sealPreferenceToken(SECRET, ANN);
  const now = new Date('2031-03-01T12:00:00Z');

  it('are taken for their page for a day, not for another page, nor later, nor altered', () => {
    const csrf = signPreferenceCsrf(SECRET, token, now);
    expect(verifyPreferenceCsrf(SECRET, token, csrf, now)).toBe(true);
    expect(verifyPreferenceCsrf(SECRET, token, csrf, new Date(now.getTime() + PREFERENCE_CSRF_TTL_MS))).toBe(
      true,
    );
    expect(
      verifyPreferenceCsrf(SECRET, token, csrf, new Date(now.getTime() + PREFERENCE_CSRF_TTL_MS + 1000)),
    ).toBe(false);
    const other = sealPreferenceToken(SECRET, { ...ANN, address: 'bob@example.test' });
    expect(verifyPreferenceCsrf(SECRET, other, csrf, now)).toBe(false);
    expect(verifyPreferenceCsrf('another-secret-of-32-characters!', token, csrf, now)).toBe(false);
    const [issued, mac] = csrf.split('.') as [string, string];
    // A later issue time under the same MAC: refused.
    const later = (Number.parseInt(issued, 36) + 3600).toString(36);
    expect(verifyPreferenceCsrf(SECRET, token, `${later}.${mac}`, now)).toBe(false);
    expect(verifyPreferenceCsrf(SECRET, token, '', now)).toBe(false);
    expect(verifyPreferenceCsrf(SECRET, token, `${issued}.${mac.slice(1)}A`, now)).toBe(false);
  });
});
