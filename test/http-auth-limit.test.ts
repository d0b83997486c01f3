/**
 * The limit of wrong keys on a real `mailroom serve` (SQLite, loopback): 2,000 wrong keys from one address
 * get 429 past the limit while a valid key from that same address keeps getting 200 quickly; with
 * `--trust-proxy 127.0.0.1` the client addresses a trusted proxy forwards are limited separately and a
 * forwarded header from anyone else is ignored; the dashboard's sign-in counts under the same limit.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { childEntry } from './support/child-bundle.js';

const root = fileURLToPath(new URL('..', import.meta.url));

interface Hit {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  ms: number;
}

let dir: string;
let server: ChildProcess;
let exited: Promise<unknown>;
let port: number;
let secret: string;

/** One request to the server, from `from` (any loopback address), timed. */
function hit(
  path: string,
  options: {
    key?: string | null;
    agent?: Agent;
    from?: string;
    method?: string;
    headers?: Record<string, string>;
    form?: string;
  } = {},
): Promise<Hit> {
  const started = performance.now();
  const key = options.key === undefined ? secret : options.key;
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: '127.0.0.1',
        port,
        path,
        method: options.method ?? 'GET',
        ...(options.agent ? { agent: options.agent } : {}),
        localAddress: options.from ?? '127.0.0.1',
        headers: {
          ...(key ? { authorization: `Bearer ${key}` } : {}),
          ...(options.form === undefined
            ? {}
            : {
                'content-type': 'application/x-www-form-urlencoded',
                'content-length': Buffer.byteLength(options.form),
              }),
          ...options.headers,
        },
      },
      (res) => {
        res.resume();
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, headers: res.headers, ms: performance.now() - started }),
        );
      },
    );
    req.on('error', reject);
    req.end(options.form);
  });
}

/** One connection kept alive for the valid client, as an app's HTTP client keeps one. */
const keepAlive = new Agent({ keepAlive: true, maxSockets: 1 });
const controlAgent = new Agent({ keepAlive: true, maxSockets: 1 });

/**
 * `count` wrong keys sent from `from` by a child process over `concurrency` kept-alive connections; the
 * statuses it got, in order of the answers.
 */
function attackFrom(from: string, count: number, concurrency: number): Promise<number[]> {
  const script = `
    const http = require('node:http');
    const crypto = require('node:crypto');
    const agent = new http.Agent({ keepAlive: true, maxSockets: ${concurrency} });
    const statuses = [];
    let sent = 0;
    const one = () => new Promise((resolve, reject) => {
      const req = http.request({ host: '127.0.0.1', port: ${port}, path: '/keys', agent,
        localAddress: '${from}',
        headers: { authorization: 'Bearer sk_live_' + crypto.randomBytes(32).toString('base64url') } },
        (res) => { res.resume(); res.on('end', () => { statuses.push(res.statusCode); resolve(); }); });
      req.on('error', reject);
      req.end();
    });
    const worker = async () => { while (sent < ${count}) { sent++; await one(); } };
    Promise.all(Array.from({ length: ${concurrency} }, worker)).then(() => {
      process.stdout.write(JSON.stringify(statuses));
      agent.destroy();
    });
  `;
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['-e', script]);
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => {
      out += chunk.toString();
    });
    child.stderr.resume();
    child.on('error', reject);
    child.on('exit', (code) =>
      code === 0 ? resolve(JSON.parse(out) as number[]) : reject(new Error(`attacker exited ${code}`)),
    );
  });
}

const wrongKey = (): string => `sk_live_${randomBytes(32).toString('base64url')}`;

const p99 = (values: number[]): number => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil(sorted.length * 0.99) - 1)] ?? 0;
};

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'mailroom-auth-limit-'));
  // The server in a process of its own, as it runs: its latency is not the test's clients' event loop.
  // The CLI bundled from its sources (child-bundle.ts), as `bin/mailroom.js` would run them through tsx:
  // a start without tsx's loader, seconds of CPU less on the run's tail, where this file runs alone.
  server = spawn(process.execPath, [
    await childEntry(join(root, 'packages/cli/src/bin.ts')),
    'serve',
    '--port',
    '0',
    '--database',
    join(dir, 'limit.db'),
    '--outbox',
    join(dir, 'outbox'),
    '--no-worker',
    '--trust-proxy',
    '127.0.0.1',
    '--log-level',
    'silent',
  ]);
  exited = new Promise((resolve) => server.once('exit', resolve));
  let out = '';
  server.stdout?.on('data', (chunk: Buffer) => {
    out += chunk.toString();
  });
  server.stderr?.resume();
  await vi.waitFor(
    () => {
      const match = /listening on http:\/\/127\.0\.0\.1:(\d+)[\s\S]*?(sk_live_[\w-]+)/.exec(out);
      if (!match) throw new Error(`not listening yet: ${out}`);
      port = Number(match[1]);
      secret = match[2] ?? '';
    },
    { timeout: 60_000, interval: 100 },
  );
}, 90_000);

afterAll(async () => {
  keepAlive.destroy();
  controlAgent.destroy();
  server?.kill('SIGTERM');
  await exited;
  rmSync(dir, { recursive: true, force: true });
});

describe('wrong keys limited, valid keys served', () => {
  it('2,000 wrong keys from one address: 429 past the limit; a valid key from it keeps 200 with p99 < 50 ms', async () => {
    const from = '127.0.0.2';
    // The valid client has been using its key before the attack: its latency then, for the log.
    const calm: number[] = [];
    for (let i = 0; i < 100; i++) {
      const res = await hit('/keys', { from, agent: keepAlive });
      expect(res.status).toBe(200);
      calm.push(res.ms);
    }
    // The attacker in a process of its own (8 connections at once, kept alive), so that the valid
    // client's timings are not the attacker's own event loop.
    const attack = attackFrom(from, 2000, 8);
    const valid: Hit[] = [];
    // A control: the same key from an address that is not attacked, at the same time. Its timings are
    // what the server's load alone costs; the attacked address's valid key must not fare worse.
    const control: Hit[] = [];
    let attacking = true;
    const client = async (): Promise<void> => {
      while (attacking) valid.push(await hit('/keys', { from, agent: keepAlive }));
    };
    const controlClient = async (): Promise<void> => {
      while (attacking) control.push(await hit('/keys', { from: '127.0.0.9', agent: controlAgent }));
    };
    const [wrong] = await Promise.all([
      attack.finally(() => {
        attacking = false;
      }),
      client(),
      controlClient(),
    ]);
    expect(wrong).toHaveLength(2000);
    const counts = { 401: 0, 429: 0, other: 0 };
    for (const status of wrong) {
      if (status === 401 || status === 429) counts[status] += 1;
      else counts.other += 1;
    }
    // Up to the limit (10, and the few in flight when it was reached) 401; every other one 429.
    expect(counts.other).toBe(0);
    expect(counts[401]).toBeGreaterThanOrEqual(10);
    expect(counts[401]).toBeLessThanOrEqual(10 + 8);
    expect(counts[429]).toBe(2000 - counts[401]);
    expect(valid.length).toBeGreaterThan(20);
    expect(valid.every((h) => h.status === 200)).toBe(true);
    const validP99 = p99(valid.map((h) => h.ms));
    const controlP99 = p99(control.map((h) => h.ms));
    expect(control.every((h) => h.status === 200)).toBe(true);
    console.log(
      `valid key before the attack: p99 ${p99(calm).toFixed(1)} ms; during 2,000 wrong keys: ${valid.length} requests, p99 ${validP99.toFixed(1)} ms (control from an address not attacked: ${control.length} requests, p99 ${controlP99.toFixed(1)} ms); wrong: ${counts[401]} x 401, ${counts[429]} x 429`,
    );
    // The bound is 50 ms (issue 36). On a machine so loaded that the server's own load already costs more
    // (a shared CI box: the control's p99 from an address not attacked, in the same run, past 25 ms), the
    // attacked address's valid key must do no worse than twice the control's p99.
    expect(validP99).toBeLessThan(Math.max(50, 2 * controlP99));
    // A limited wrong key carries Retry-After within the window.
    const limited = await hit('/keys', { from, key: wrongKey() });
    expect(limited.status).toBe(429);
    expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
    expect(Number(limited.headers['retry-after'])).toBeLessThanOrEqual(60);
    // A valid key never seen before from the limited address is served too (a bounded check).
    expect((await hit('/keys', { from, key: secret })).status).toBe(200);
  }, 120_000);

  it('with --trust-proxy 127.0.0.1, two forwarded client addresses are limited separately; a forged header from elsewhere is ignored', async () => {
    const proxy = '127.0.0.1';
    const forwarded = (client: string) => ({ 'x-forwarded-for': `198.51.100.77, ${client}` });
    for (let i = 0; i < 10; i++) {
      const res = await hit('/keys', { from: proxy, key: wrongKey(), headers: forwarded('203.0.113.5') });
      expect(res.status).toBe(401);
    }
    expect(
      (await hit('/keys', { from: proxy, key: wrongKey(), headers: forwarded('203.0.113.5') })).status,
    ).toBe(429);
    // The valid key of the limited client is served.
    expect((await hit('/keys', { from: proxy, headers: forwarded('203.0.113.5') })).status).toBe(200);
    // Another client behind the same proxy is not limited by the first one's failures: the proxy's own
    // address is not what is counted. Through the standard Forwarded header as well.
    for (let i = 0; i < 5; i++) {
      const res = await hit('/keys', { from: proxy, key: wrongKey(), headers: forwarded('203.0.113.6') });
      expect(res.status).toBe(401);
    }
    const viaForwarded = await hit('/keys', {
      from: proxy,
      key: wrongKey(),
      headers: { forwarded: 'for=198.51.100.77, for="203.0.113.6:4711";proto=http' },
    });
    expect(viaForwarded.status).toBe(401);
    // The left-most (client-written) entry is not believed: a fresh address there changes nothing.
    for (let i = 0; i < 4; i++) {
      const res = await hit('/keys', {
        from: proxy,
        key: wrongKey(),
        headers: { 'x-forwarded-for': `10.${i}.0.1, 203.0.113.6` },
      });
      expect(res.status).toBe(401);
    }
    expect(
      (await hit('/keys', { from: proxy, key: wrongKey(), headers: forwarded('203.0.113.6') })).status,
    ).toBe(429);
    // From a peer that is not a trusted proxy, the header is ignored: 127.0.0.4 is counted as itself.
    for (let i = 0; i < 10; i++) {
      const res = await hit('/keys', {
        from: '127.0.0.4',
        key: wrongKey(),
        headers: { 'x-forwarded-for': `203.0.113.${100 + i}` },
      });
      expect(res.status).toBe(401);
    }
    expect(
      (await hit('/keys', { from: '127.0.0.4', key: wrongKey(), headers: forwarded('203.0.113.200') }))
        .status,
    ).toBe(429);
  });

  it('60 wrong dashboard sign-ins: 429 with Retry-After past the limit; the right secret still signs in', async () => {
    const from = '127.0.0.3';
    const statuses: number[] = [];
    let last: Hit | undefined;
    for (let i = 0; i < 60; i++) {
      last = await hit('/dashboard/sign-in', {
        from,
        key: null,
        method: 'POST',
        form: new URLSearchParams({ secret: wrongKey() }).toString(),
      });
      statuses.push(last.status);
    }
    expect(statuses.slice(0, 10)).toEqual(Array(10).fill(401));
    expect(statuses.slice(10)).toEqual(Array(50).fill(429));
    expect(Number(last?.headers['retry-after'])).toBeGreaterThan(0);
    // The API counts the same failures: a wrong key from that address is limited at once.
    expect((await hit('/keys', { from, key: wrongKey() })).status).toBe(429);
    const signedIn = await hit('/dashboard/sign-in', {
      from,
      key: null,
      method: 'POST',
      form: new URLSearchParams({ secret }).toString(),
    });
    expect(signedIn.status).toBe(303);
    expect(String(signedIn.headers['set-cookie'])).toMatch(/mailroom_dashboard=/i);
  });
});
