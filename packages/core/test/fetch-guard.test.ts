import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { MailroomError } from '../src/base/errors.js';
import type { ConnectTarget, GuardedFetcherOptions, ResolvedAddress } from '../src/fetch/index.js';
import { createGuardedFetcher } from '../src/fetch/index.js';

/**
 * The guard is tested against real listeners on loopback, counting the TCP connections they accept. Every
 * other address is only ever reached through an injected resolver, and a connect hook vetoes (and records)
 * any connection to a non-loopback address: a broken guard fails these tests instead of sending traffic.
 */

type Handler = (req: IncomingMessage, res: ServerResponse) => void;

interface LoopbackServer {
  port: number;
  /** TCP connections accepted, on 127.0.0.1 and ::1 together. */
  connections: number;
  hosts: string[];
  close(): Promise<void>;
}

/** One handler listening on 127.0.0.1 and ::1 with the same port. */
async function loopbackServer(handler: Handler): Promise<LoopbackServer> {
  for (let tries = 0; ; tries++) {
    const v4 = createServer(handler);
    await new Promise<void>((resolve) => v4.listen(0, '127.0.0.1', resolve));
    const port = (v4.address() as AddressInfo).port;
    const v6 = createServer(handler);
    const ok = await new Promise<boolean>((resolve) => {
      v6.once('error', () => resolve(false));
      v6.listen({ port, host: '::1', ipv6Only: true }, () => resolve(true));
    });
    if (!ok) {
      await closeServer(v4);
      if (tries > 5) throw new Error('could not bind 127.0.0.1 and ::1 on one port');
      continue;
    }
    const server: LoopbackServer = {
      port,
      connections: 0,
      hosts: [],
      close: async () => {
        await Promise.all([closeServer(v4), closeServer(v6)]);
      },
    };
    for (const s of [v4, v6]) {
      s.on('connection', () => {
        server.connections++;
      });
      s.on('request', (req: IncomingMessage) => server.hosts.push(req.headers.host ?? ''));
    }
    return server;
  }
}

function closeServer(server: Server): Promise<void> {
  server.closeAllConnections();
  return new Promise((resolve) => server.close(() => resolve()));
}

const isLoopback = (address: string) => /^127\./.test(address) || address === '::1';

/** Records every connection the fetcher is about to open, and vetoes any to a non-loopback address. */
function connectGuard() {
  const attempts: ConnectTarget[] = [];
  const hook = (target: ConnectTarget) => {
    attempts.push(target);
    if (!isLoopback(target.address)) {
      throw new Error(`TEST GUARD: a connection to ${target.address} was attempted`);
    }
  };
  return { attempts, hook };
}

/** Test names only: an unknown name is an error, never a real DNS query. */
function testResolver(table: Record<string, string[]>, calls: string[] = []) {
  return async (hostname: string): Promise<ResolvedAddress[]> => {
    calls.push(hostname);
    const addresses = table[hostname];
    if (!addresses) throw new Error(`test resolver: no entry for ${hostname}`);
    return addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
  };
}

const DNS: Record<string, string[]> = {
  localhost: ['127.0.0.1', '::1'],
  'loop.test': ['127.0.0.1'],
  'loop6.test': ['::1'],
  'mixed.test': ['93.184.216.34', '127.0.0.1'],
  'mixed6.test': ['2606:2800:220:1:248:1893:25c8:1946', '::1'],
  'mixed-mapped.test': ['93.184.216.34', '::ffff:7f00:1'],
  'metadata.test': ['169.254.169.254'],
  'metadata6.test': ['fd00:ec2::254'],
  'metadata-mapped.test': ['::ffff:a9fe:a9fe'],
  'metadata-nat64.test': ['64:ff9b::a9fe:a9fe'],
  'ten.test': ['10.0.0.1'],
  'one72.test': ['172.16.5.4'],
  'one72-top.test': ['172.31.255.254'],
  'one92.test': ['192.168.1.1'],
  'cgnat.test': ['100.64.0.1'],
  'zero.test': ['0.0.0.0'],
  'zero-net.test': ['0.1.2.3'],
  'multicast.test': ['224.0.0.1'],
  'broadcast.test': ['255.255.255.255'],
  'reserved.test': ['240.0.0.1'],
  'unspecified6.test': ['::'],
  'ula.test': ['fc00::1'],
  'linklocal6.test': ['fe80::1'],
  'multicast6.test': ['ff02::1'],
  'private-mapped.test': ['::ffff:10.0.0.1'],
  'sixtofour.test': ['2002:a9fe:a9fe::1'],
  'garbage.test': ['not-an-address'],
  'empty.test': [],
};

describe('guarded fetcher: refusals', () => {
  let server: LoopbackServer;
  let guard: ReturnType<typeof connectGuard>;
  const fetcherWith = (options: GuardedFetcherOptions = {}) =>
    createGuardedFetcher({
      resolver: testResolver(DNS),
      connectHook: guard.hook,
      timeoutMs: 5_000,
      ...options,
    });

  beforeAll(async () => {
    server = await loopbackServer((_req, res) => res.end('reached'));
  });
  afterAll(async () => {
    await server.close();
  });
  afterEach(() => {
    // Whatever a test asserted, no connection may ever have been attempted to a non-loopback address.
    expect(guard.attempts.filter((t) => !isLoopback(t.address))).toEqual([]);
  });

  const refusedUrls = (port: number) => [
    `http://127.0.0.1:${port}/`,
    `http://127.1:${port}/`,
    `http://2130706433:${port}/`,
    `http://0177.0.0.1:${port}/`,
    `http://0x7f.1:${port}/`,
    `http://0x7f000001:${port}/`,
    `http://017700000001:${port}/`,
    `http://[::1]:${port}/`,
    `http://[0:0:0:0:0:0:0:1]:${port}/`,
    `http://[::ffff:127.0.0.1]:${port}/`,
    `http://[::ffff:7f00:1]:${port}/`,
    `http://[0:0:0:0:0:ffff:7f00:1]:${port}/`,
    `http://[::127.0.0.1]:${port}/`,
    `http://0.0.0.0:${port}/`,
    `http://0:${port}/`,
    `http://[::]:${port}/`,
    `http://localhost:${port}/`,
    `http://LOCALHOST.:${port}/`,
    `http://loop.test:${port}/`,
    `http://loop6.test:${port}/`,
    `http://mixed.test:${port}/`,
    `http://mixed6.test:${port}/`,
    `http://mixed-mapped.test:${port}/`,
    `https://127.0.0.1:${port}/`,
    `http://user:secret@127.0.0.1:${port}/`,
  ];

  it('refuses every spelling of loopback with zero connections reaching the listener', async () => {
    guard = connectGuard();
    const fetcher = fetcherWith();
    for (const url of refusedUrls(server.port)) {
      const error = await fetcher.fetch(url).then(
        () => null,
        (e: unknown) => e,
      );
      expect(error, url).toBeInstanceOf(MailroomError);
      expect((error as MailroomError).code, url).toBe('FETCH_REFUSED');
      expect((error as MailroomError).status, url).toBe(422);
    }
    expect(guard.attempts).toEqual([]);
    expect(server.connections).toBe(0);
    await fetcher.close();
  });

  it('names the refused range in its message', async () => {
    guard = connectGuard();
    const fetcher = fetcherWith();
    await expect(fetcher.fetch(`http://2130706433:${server.port}/`)).rejects.toThrow(
      /127\.0\.0\.1 is loopback \(127\.0\.0\.0\/8\)/,
    );
    await expect(fetcher.fetch(`http://mixed.test:${server.port}/`)).rejects.toThrow(
      /one of 2 addresses.*127\.0\.0\.1 is loopback/,
    );
    await expect(fetcher.fetch('http://metadata.test/latest/meta-data/')).rejects.toThrow(
      /169\.254\.169\.254 is link-local \/ cloud metadata/,
    );
    await fetcher.close();
  });

  it('refuses private, metadata, CGNAT, multicast and reserved addresses without attempting a connection', async () => {
    guard = connectGuard();
    const fetcher = fetcherWith();
    const names = Object.keys(DNS).filter((n) => !['localhost', 'loop.test', 'loop6.test'].includes(n));
    const literals = [
      'http://169.254.169.254/latest/meta-data/',
      'http://[fd00:ec2::254]/latest/meta-data/',
      'http://10.0.0.1/',
      'http://172.16.0.1/',
      'http://192.168.0.1/',
      'http://100.64.0.1/',
      'http://224.0.0.1/',
      'http://255.255.255.255/',
      'http://240.0.0.1/',
      'http://[fe80::1]/',
      'http://[fc00::1]/',
      'http://[ff02::1]/',
      'http://[::ffff:a9fe:a9fe]/',
      'http://[::ffff:169.254.169.254]/',
      'http://[64:ff9b::a9fe:a9fe]/',
      'http://0xa9fea9fe/',
      'http://2852039166/',
      'http://0251.0376.0251.0376/',
    ];
    for (const url of [...names.map((n) => `http://${n}/`), ...literals]) {
      await expect(fetcher.fetch(url), url).rejects.toMatchObject({ code: 'FETCH_REFUSED' });
    }
    expect(guard.attempts).toEqual([]);
    await fetcher.close();
  });

  it('refuses other schemes before any resolution', async () => {
    guard = connectGuard();
    const calls: string[] = [];
    const fetcher = fetcherWith({ resolver: testResolver(DNS, calls) });
    for (const url of [
      'file:///etc/passwd',
      'ftp://loop.test/x.csv',
      'gopher://loop.test:70/',
      'data:text/plain,hi',
      'javascript:alert(1)',
      'not a url',
    ]) {
      await expect(fetcher.fetch(url), url).rejects.toMatchObject({ code: 'FETCH_REFUSED' });
    }
    expect(calls).toEqual([]);
    expect(guard.attempts).toEqual([]);
    await fetcher.close();
  });

  it('connects to an allow-listed host:port, pinned to the address it checked', async () => {
    guard = connectGuard();
    const calls: string[] = [];
    const fetcher = fetcherWith({
      resolver: testResolver(DNS, calls),
      allowHosts: [`loop.test:${server.port}`, `127.0.0.1:${server.port}`],
    });
    const byName = await fetcher.fetch(`http://loop.test:${server.port}/file.txt`);
    expect(byName.status).toBe(200);
    expect((await byName.bytes()).toString()).toBe('reached');
    const byAddress = await fetcher.fetch(`http://127.0.0.1:${server.port}/file.txt`);
    expect((await byAddress.bytes()).toString()).toBe('reached');
    // The name was resolved once, the socket opened to that address, and Host still names the host.
    expect(calls).toEqual(['loop.test']);
    expect(guard.attempts.map((t) => [t.hostname, t.address, t.allowListed])).toEqual([
      ['loop.test', '127.0.0.1', true],
      ['127.0.0.1', '127.0.0.1', true],
    ]);
    expect(server.hosts.slice(-2)).toEqual([`loop.test:${server.port}`, `127.0.0.1:${server.port}`]);
    // The allow-list is exact: another spelling of the port or host is checked like any other.
    await expect(fetcher.fetch(`http://localhost:${server.port}/`)).rejects.toMatchObject({
      code: 'FETCH_REFUSED',
    });
    await fetcher.close();
  });

  it('resolves once per connection: a rebinding resolver cannot swap in loopback after the check', async () => {
    guard = connectGuard();
    const calls: string[] = [];
    let n = 0;
    const before = server.connections;
    const fetcher = fetcherWith({
      resolver: async (hostname) => {
        calls.push(hostname);
        // First answer public (passes the check), every later one loopback.
        return [{ address: n++ === 0 ? '93.184.216.34' : '127.0.0.1', family: 4 }];
      },
    });
    await expect(fetcher.fetch(`http://rebind.test:${server.port}/`)).rejects.toThrow(/TEST GUARD/);
    // The socket was to be opened to the checked public address (vetoed by the test), never to loopback.
    expect(calls).toEqual(['rebind.test']);
    expect(guard.attempts.map((t) => t.address)).toEqual(['93.184.216.34']);
    expect(server.connections).toBe(before);
    guard.attempts.length = 0;
    await fetcher.close();
  });
});

describe('guarded fetcher: redirects', () => {
  let allowed: LoopbackServer;
  let target: LoopbackServer;
  let guard: ReturnType<typeof connectGuard>;

  beforeAll(async () => {
    target = await loopbackServer((_req, res) => res.end('secret'));
    allowed = await loopbackServer((req, res) => {
      const url = new URL(req.url ?? '/', 'http://x');
      const to = url.searchParams.get('to');
      const hops = Number(url.searchParams.get('hops') ?? 0);
      if (to) {
        res.writeHead(302, { location: to.replace('PORT', String(target.port)) }).end();
      } else if (hops > 0) {
        res.writeHead(307, { location: `/chain?hops=${hops - 1}` }).end();
      } else {
        res.end('landed');
      }
    });
  });
  afterAll(async () => {
    await allowed.close();
    await target.close();
  });
  afterEach(() => {
    expect(guard.attempts.filter((t) => !isLoopback(t.address))).toEqual([]);
  });

  const fetcherWith = () =>
    createGuardedFetcher({
      resolver: testResolver(DNS),
      connectHook: guard.hook,
      allowHosts: [`127.0.0.1:${allowed.port}`],
      timeoutMs: 5_000,
    });

  it('re-checks every hop: a redirect from an allowed host to loopback or metadata is refused', async () => {
    guard = connectGuard();
    const fetcher = fetcherWith();
    const base = `http://127.0.0.1:${allowed.port}/go?to=`;
    for (const to of [
      'http://127.0.0.1:PORT/',
      'http://[::1]:PORT/',
      'http://2130706433:PORT/',
      'http://localhost:PORT/',
      'http://metadata.test/latest/meta-data/',
      'http://169.254.169.254/latest/meta-data/',
      'file:///etc/passwd',
    ]) {
      await expect(fetcher.fetch(base + encodeURIComponent(to)), to).rejects.toMatchObject({
        code: 'FETCH_REFUSED',
      });
    }
    expect(target.connections).toBe(0);
    expect(guard.attempts.every((t) => t.port === allowed.port)).toBe(true);
    await fetcher.close();
  });

  it('follows at most 5 redirects', async () => {
    guard = connectGuard();
    const fetcher = fetcherWith();
    const ok = await fetcher.fetch(`http://127.0.0.1:${allowed.port}/chain?hops=5`);
    expect((await ok.bytes()).toString()).toBe('landed');
    expect(ok.url).toBe(`http://127.0.0.1:${allowed.port}/chain?hops=0`);
    await expect(fetcher.fetch(`http://127.0.0.1:${allowed.port}/chain?hops=6`)).rejects.toThrow(
      /more than 5 redirects/,
    );
    await fetcher.close();
  });
});
