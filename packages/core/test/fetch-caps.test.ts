import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { MailroomError } from '../src/base/errors.js';
import type { ConnectTarget, GuardedFetcher } from '../src/fetch/index.js';
import { createGuardedFetcher, isByteCapError } from '../src/fetch/index.js';

const MiB = 1024 * 1024;

/** `/trickle` answers whose connection is still open. */
let trickling = 0;

/** Bytes of `/drip` answers that reached the socket before the client closed, one entry per request. */
const dripped: number[] = [];

/** A loopback server with bodies that never end, trickle, or inflate without bound. */
function hostileServer(): Server {
  // 8 MiB of zeros gzip to about 8 KiB; repeated members inflate 1000 to 1.
  const bombMember = gzipSync(Buffer.alloc(8 * MiB));
  const block = Buffer.alloc(64 * 1024, 'x');
  return createServer((req, res) => {
    const stop = () => res.destroy();
    req.on('close', stop);
    if (req.url === '/endless') {
      res.writeHead(200, { 'content-type': 'application/octet-stream' });
      const pump = () => {
        while (!res.destroyed && res.write(block)) {}
        if (!res.destroyed) res.once('drain', pump);
      };
      pump();
    } else if (req.url === '/trickle') {
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.flushHeaders();
      const timer = setInterval(() => res.write('x'), 1_000);
      trickling++;
      res.on('close', () => {
        trickling--;
        clearInterval(timer);
      });
    } else if (req.url === '/silent') {
      // Headers never come.
    } else if (req.url === '/bomb') {
      res.writeHead(200, { 'content-encoding': 'gzip', 'content-type': 'application/pdf' });
      let sent = 0;
      const pump = () => {
        while (!res.destroyed && sent < 4_000 && res.write(bombMember)) sent++;
        if (sent >= 4_000) res.end();
        else if (!res.destroyed) res.once('drain', pump);
      };
      pump();
    } else if (req.url === '/drip') {
      // 4 KiB every 2 ms: slow enough that the socket buffers never fill, so what the server could write
      // is what the client read.
      res.writeHead(200, { 'content-type': 'application/octet-stream' });
      const at = dripped.push(0) - 1;
      const chunk = Buffer.alloc(4096, 'd');
      const timer = setInterval(() => {
        if (res.destroyed) return;
        res.write(chunk, (error) => {
          if (!error) dripped[at] = (dripped[at] ?? 0) + chunk.length;
        });
      }, 2);
      res.on('close', () => clearInterval(timer));
    } else if (req.url === '/moved') {
      res.writeHead(302, { location: 'http://169.254.169.254/latest/meta-data?token=x' }).end('moved');
    } else if (req.url === '/declared') {
      res.writeHead(200, { 'content-length': String(100 * MiB) });
      res.write('x');
    } else if (req.url === '/small-gzip') {
      res.writeHead(200, { 'content-encoding': 'gzip' });
      res.end(gzipSync(Buffer.from('hello, decoded world')));
    } else {
      res.writeHead(404).end();
    }
  });
}

describe('guarded fetcher: caps', () => {
  let server: Server;
  let port: number;
  let fetcher: GuardedFetcher;
  const attempts: ConnectTarget[] = [];

  beforeAll(async () => {
    server = hostileServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
    fetcher = createGuardedFetcher({
      allowHosts: [`127.0.0.1:${port}`],
      maxBytes: 4 * MiB,
      timeoutMs: 1_500,
      resolver: async () => {
        throw new Error('no DNS in this test');
      },
      connectHook: (target) => {
        attempts.push(target);
        if (target.address !== '127.0.0.1') throw new Error(`TEST GUARD: ${target.address}`);
      },
    });
  });
  afterAll(async () => {
    await fetcher.close();
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
    expect(attempts.every((t) => t.address === '127.0.0.1')).toBe(true);
  });

  async function refusal(path: string): Promise<{ error: MailroomError; ms: number; rssGrowth: number }> {
    globalThis.gc?.();
    const rss = process.memoryUsage().rss;
    const started = Date.now();
    const error = await fetcher
      .fetch(`http://127.0.0.1:${port}${path}`)
      .then((res) => res.bytes())
      .then(
        () => null,
        (e: unknown) => e,
      );
    expect(error).toBeInstanceOf(MailroomError);
    expect((error as MailroomError).code).toBe('FETCH_REFUSED');
    return {
      error: error as MailroomError,
      ms: Date.now() - started,
      rssGrowth: process.memoryUsage().rss - rss,
    };
  }

  it('stops an endless body at the byte cap, memory flat', async () => {
    const { error, rssGrowth } = await refusal('/endless');
    expect(isByteCapError(error)).toBe(true);
    expect(error.message).toMatch(/grew past the limit of 4194304 bytes/);
    expect(rssGrowth).toBeLessThan(48 * MiB);
  });

  it('stops a 1-byte-per-second body at the time cap', async () => {
    const { error, ms } = await refusal('/trickle');
    expect(error.message).toMatch(/took longer than 1500 ms/);
    expect(ms).toBeGreaterThanOrEqual(1_400);
    expect(ms).toBeLessThan(4_000);
  });

  it('stops a server that never answers at the time cap', async () => {
    const { error, ms } = await refusal('/silent');
    expect(error.message).toMatch(/took longer than 1500 ms/);
    expect(ms).toBeLessThan(4_000);
  });

  it('stops a gzip bomb at the decoded cap, memory flat', async () => {
    const { error, rssGrowth } = await refusal('/bomb');
    expect(isByteCapError(error)).toBe(true);
    expect(error.message).toMatch(/decoded body grew past the limit/);
    expect(rssGrowth).toBeLessThan(48 * MiB);
  });

  it('refuses a declared length past the cap before reading the body', async () => {
    const { error } = await refusal('/declared');
    expect(error.message).toMatch(/declares 104857600 bytes/);
  });

  it('decodes a gzip body under the cap', async () => {
    const res = await fetcher.fetch(`http://127.0.0.1:${port}/small-gzip`);
    expect(res.status).toBe(200);
    expect((await res.bytes()).toString()).toBe('hello, decoded world');
  });

  it('takes a smaller cap per request', async () => {
    const res = await fetcher.fetch(`http://127.0.0.1:${port}/small-gzip`, { maxBytes: 5 });
    await expect(res.bytes()).rejects.toSatisfy(isByteCapError);
  });

  describe('post (status only)', () => {
    const post = (path: string) =>
      fetcher.post(`http://127.0.0.1:${port}${path}`, { body: '{"a":1}', maxBytes: 1024 });

    it('answers the status of an endless body once past the cap, dropping the connection', async () => {
      expect(await post('/endless')).toEqual({ status: 200, location: null });
      expect(await post('/nothing-here')).toEqual({ status: 404, location: null });
    });

    it('reads no more than the cap of a body that keeps coming', async () => {
      expect(await post('/drip')).toEqual({ status: 200, location: null });
      await new Promise((resolve) => setTimeout(resolve, 50));
      // The cap (1 KiB) is passed by the first chunk; one more may be on its way when the socket closes.
      expect(dripped.at(-1)).toBeGreaterThan(0);
      expect(dripped.at(-1)).toBeLessThanOrEqual(2 * 4096);
    });

    it('drops a body declared larger than the cap at once, and keeps the status', async () => {
      const started = Date.now();
      expect(await post('/declared')).toEqual({ status: 200, location: null });
      expect(Date.now() - started).toBeLessThan(1_000);
    });

    it('answers a 3xx with its Location and never follows it', async () => {
      const before = attempts.length;
      expect(await post('/moved')).toEqual({
        status: 302,
        location: 'http://169.254.169.254/latest/meta-data?token=x',
      });
      expect(attempts.slice(before).every((t) => t.address === '127.0.0.1')).toBe(true);
    });

    it('stops a server that never answers at the time cap, retryable', async () => {
      const started = Date.now();
      const error = await post('/silent').catch((e: unknown) => e);
      expect(error).toBeInstanceOf(MailroomError);
      expect(error).toMatchObject({ code: 'FETCH_REFUSED', retryable: true });
      expect((error as MailroomError).message).toMatch(/took longer than 1500 ms/);
      expect(Date.now() - started).toBeLessThan(4_000);
    });

    it('answers at the status line; a body still trickling at the time cap is dropped', async () => {
      const started = Date.now();
      expect(await post('/trickle')).toEqual({ status: 200, location: null });
      // The status did not wait for the body (a byte a second, never ending).
      expect(Date.now() - started).toBeLessThan(1_000);
      expect(trickling).toBe(1);
      // ... whose connection is closed at the time cap (1.5 s), not held for as long as it trickles.
      await vi.waitFor(() => expect(trickling).toBe(0), { timeout: 4_000, interval: 50 });
      expect(Date.now() - started).toBeGreaterThanOrEqual(1_400);
    });

    it('refuses what fetch refuses, before connecting', async () => {
      const before = attempts.length;
      for (const url of ['file:///etc/passwd', 'http://user:pw@127.0.0.1/', 'http://10.0.0.1/hook']) {
        await expect(fetcher.post(url, { body: 'x' })).rejects.toMatchObject({ code: 'FETCH_REFUSED' });
      }
      expect(attempts.slice(before).every((t) => t.address === '127.0.0.1')).toBe(true);
    });
  });
});
