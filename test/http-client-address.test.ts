/**
 * The client address behind trusted proxies (`trustProxy`, `--trust-proxy`): the right-most untrusted hop
 * of `Forwarded` (RFC 7239, IPv6 and ports included) or `X-Forwarded-For`, only from a trusted peer; CIDR
 * ranges and IPv4-mapped peers; malformed entries refused with the flag or option named.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createClientAddress } from '../packages/http/src/limits/client-address.js';
import { runCli } from './support/cli-harness.js';

const req = (ip: string | undefined, headers: Record<string, string> = {}) => ({
  method: 'GET',
  path: '/keys',
  headers,
  body: undefined,
  ...(ip === undefined ? {} : { ip }),
});

describe('createClientAddress', () => {
  it('without trusted proxies, the peer, whatever the headers say', () => {
    const of = createClientAddress(undefined);
    expect(of(req('10.0.0.9', { 'x-forwarded-for': '1.2.3.4' }))).toBe('10.0.0.9');
    expect(createClientAddress([])(req('10.0.0.9', { forwarded: 'for=1.2.3.4' }))).toBe('10.0.0.9');
  });

  it('from a trusted peer, the right-most untrusted hop; the chain of trusted proxies is skipped', () => {
    const of = createClientAddress(['127.0.0.1', '10.0.0.0/8', 'fd00::/8']);
    expect(of(req('127.0.0.1', { 'x-forwarded-for': '6.6.6.6, 203.0.113.5' }))).toBe('203.0.113.5');
    expect(of(req('127.0.0.1', { 'x-forwarded-for': '203.0.113.5, 10.1.2.3' }))).toBe('203.0.113.5');
    // A dual-stack socket's IPv4-mapped peer is the IPv4 address.
    expect(of(req('::ffff:127.0.0.1', { 'x-forwarded-for': '203.0.113.7' }))).toBe('203.0.113.7');
    // From an untrusted peer the headers are ignored.
    expect(of(req('198.51.100.1', { 'x-forwarded-for': '203.0.113.5' }))).toBe('198.51.100.1');
    // No header from a trusted peer: the peer itself; only trusted hops: the left-most.
    expect(of(req('127.0.0.1'))).toBe('127.0.0.1');
    expect(of(req('127.0.0.1', { 'x-forwarded-for': '10.0.0.2, 10.0.0.3' }))).toBe('10.0.0.2');
  });

  it('reads Forwarded (preferred over X-Forwarded-For): quotes, brackets, ports, and hops without for=', () => {
    const of = createClientAddress(['127.0.0.1', 'fd00::/8']);
    const forwarded = (value: string) =>
      of(req('127.0.0.1', { forwarded: value, 'x-forwarded-for': '9.9.9.9' }));
    expect(forwarded('for=192.0.2.60;proto=http;by=203.0.113.43')).toBe('192.0.2.60');
    expect(forwarded('for=192.0.2.60, for="[2001:db8:cafe::17]:4711"')).toBe('2001:db8:cafe::17');
    expect(forwarded('for="192.0.2.61:8080", for="[fd00::1]"')).toBe('192.0.2.61');
    expect(forwarded('For=192.0.2.62, proto=https')).toBe('unknown');
  });

  it('refuses an entry that is not an address or a CIDR range', () => {
    for (const entry of ['localhost', '10.0.0.0/33', '10.0.0.0/', '1.2.3.4/8/9', '::1/129']) {
      expect(() => createClientAddress([entry]), entry).toThrow(/trustProxy: .* is not an IP address/);
    }
  });
});

describe('mailroom serve --trust-proxy', () => {
  it('a malformed value is a usage error naming the flag', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'mailroom-trust-proxy-'));
    try {
      const run = await runCli(dir, [
        'serve',
        '--port',
        '0',
        '--database',
        join(dir, 'x.db'),
        '--trust-proxy',
        '127.0.0.1,proxy.local',
      ]);
      expect(run.code).not.toBe(0);
      expect(run.err).toMatch(/--trust-proxy: "proxy\.local" is not an IP address or a CIDR range/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
