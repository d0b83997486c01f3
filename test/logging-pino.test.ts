import { mkdtempSync, rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type CliIo, cliLogger, main } from '@mailroom/cli';
import type { Mailroom, Store } from '@mailroom/core';
import { createMailroom } from '@mailroom/core';
import { mailroomPlugin } from '@mailroom/http/fastify';
import { memoryStore, memoryTransport } from '@mailroom/memory';
import Fastify, { type FastifyInstance } from 'fastify';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';

/**
 * Structured logs: every line the HTTP layer writes about a request carries its request id, and no line
 * ever holds the Authorization header, the project secret or a request body, whatever the outcome (200,
 * 401, a 500 from a failing store, a dashboard sign-in). Then the CLI's pino logger, and `mailroom serve`
 * writing JSON lines to stderr.
 */

const SENDER = 'news@acme.test';
const MARKER = 'BODY-MARKER-7f3a9c';

interface LogLine {
  level: number | string;
  msg?: string;
  requestId?: string;
  [key: string]: unknown;
}

function parseLines(raw: string[]): LogLine[] {
  return raw
    .join('')
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l) as LogLine);
}

describe('request logs through the HTTP layer', () => {
  const raw: string[] = [];
  let mailroom: Mailroom;
  let app: FastifyInstance;
  let base: string;
  let secret: string;
  let broken = false;

  beforeAll(async () => {
    const logger = pino({ level: 'debug' }, { write: (line: string) => raw.push(line) });
    const inner = memoryStore();
    // A store whose sender lookup fails on demand, as a broken database would.
    const store = new Proxy(inner, {
      get(target, prop, receiver) {
        if (prop === 'findSender' && broken) {
          return async () => {
            throw new Error(`disk on fire while reading ${MARKER}`);
          };
        }
        const value: unknown = Reflect.get(target, prop, receiver);
        return typeof value === 'function' ? value.bind(target) : value;
      },
    }) as Store;
    mailroom = createMailroom({ store, transport: memoryTransport(), logger });
    const project = await mailroom.admin.createProject({ name: 'Acme' });
    secret = project.secret;
    await mailroom.admin.addSender(project.project.id, { address: SENDER });
    app = Fastify();
    await app.register(mailroomPlugin, { mailroom, logger });
    await app.listen({ host: '127.0.0.1', port: 0 });
    base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
  });

  afterAll(async () => {
    await app.close();
    await mailroom.close();
  });

  const body = JSON.stringify({
    subject: `Subject ${MARKER}`,
    sender: SENDER,
    message: `Hello ${MARKER}`,
    recipients: ['ann@example.test'],
  });
  const send = (requestId: string, key: string) =>
    fetch(`${base}/send/mail`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${key}`,
        'content-type': 'application/json',
        'x-request-id': requestId,
      },
      body,
    });

  it('tags each request’s lines with its id and never logs the secret, the header or the body', async () => {
    expect((await send('req-ok-1', secret)).status).toBe(200);
    expect((await send('req-401-1', 'sk_live_wrong-secret-for-this-test-00000000')).status).toBe(401);
    broken = true;
    const failed = await send('req-500-1', secret);
    broken = false;
    expect(failed.status).toBe(500);
    const signIn = await fetch(`${base}/dashboard/sign-in`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-request-id': 'req-signin-1' },
      body: new URLSearchParams({ secret }).toString(),
    });
    expect(signIn.status).toBe(303);
    await mailroom.worker.drain();

    const lines = parseLines(raw);
    const of = (id: string) => lines.filter((l) => l.requestId === id);
    expect(of('req-ok-1')).toEqual([
      expect.objectContaining({ msg: 'mailroom http: request', status: 200, route: 'send' }),
    ]);
    expect(of('req-401-1')).toEqual([expect.objectContaining({ status: 401 })]);
    // The fault is logged at error level with its cause, and the summary line follows; both carry the id.
    expect(of('req-500-1').map((l) => l.level)).toEqual([50, 20]);
    expect(of('req-500-1')[0]).toMatchObject({ method: 'POST', path: '/send/mail', err: expect.anything() });
    expect(of('req-signin-1').map((l) => l.msg)).toEqual([
      'mailroom dashboard: signed in',
      'mailroom http: request',
    ]);
    expect(of('req-signin-1')[0]).toMatchObject({ projectId: expect.stringMatching(/^prj_/) });

    const text = raw.join('');
    expect(text).not.toContain(secret);
    expect(text).not.toContain(secret.slice(8, 30));
    expect(text).not.toMatch(/bearer/i);
    expect(text).not.toMatch(/authorization/i);
    expect(text).not.toContain(`Hello ${MARKER}`);
    expect(text).not.toContain(`Subject ${MARKER}`);
  });
});

describe('the CLI logger', () => {
  it('writes pino JSON lines with level names and ISO times, censoring secret-like fields', () => {
    const out: string[] = [];
    const logger = cliLogger({ write: (s: string) => out.push(s) }, 'debug');
    logger.debug({ requestId: 'r1', status: 200 }, 'mailroom http: request');
    logger.warn(
      { secret: 'sk_live_x', headers: { authorization: 'Bearer sk_live_y' }, nested: { authorization: 'z' } },
      'oops',
    );
    logger.error({ err: new Error('relay down') }, 'delivery failed');
    const lines = parseLines(out);
    expect(lines[0]).toMatchObject({
      level: 'debug',
      requestId: 'r1',
      status: 200,
      msg: 'mailroom http: request',
    });
    expect(lines[0]?.time).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    expect(lines[1]).toMatchObject({ level: 'warn', secret: '[redacted]', headers: '[redacted]' });
    expect(lines[1]?.nested).toEqual({ authorization: '[redacted]' });
    expect(lines[2]).toMatchObject({ level: 'error', err: { message: 'relay down', type: 'Error' } });
    expect(out.join('')).not.toContain('sk_live_');
  });

  it('drops lines below its level, and silent drops all', () => {
    const out: string[] = [];
    const info = cliLogger({ write: (s: string) => out.push(s) });
    info.debug({}, 'hidden');
    info.info({}, 'shown');
    cliLogger({ write: (s: string) => out.push(s) }, 'silent').error({}, 'never');
    expect(parseLines(out).map((l) => l.msg)).toEqual(['shown']);
  });
});

describe('mailroom serve logs', () => {
  let dir: string;

  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'mailroom-logs-'));
  });

  afterAll(() => {
    rmSync(dir, { recursive: true, force: true });
  });

  function run(argv: string[], env: Record<string, string> = {}) {
    let out = '';
    let err = '';
    let stop: (() => void) | undefined;
    const io: CliIo = {
      stdout: { write: (s: string) => (out += s) },
      stderr: { write: (s: string) => (err += s) },
      env,
      cwd: dir,
      onShutdown: (trigger) => {
        stop = trigger;
        return () => {
          stop = undefined;
        };
      },
    };
    const done = main(argv, io);
    return { done, out: () => out, err: () => err, stop: () => stop?.() };
  }

  it('writes JSON lines to stderr with the request id, at the level asked for', async () => {
    const cli = run(
      ['serve', '--port', '0', '--database', join(dir, 'logs.db'), '--outbox', join(dir, 'outbox')],
      { MAILROOM_LOG_LEVEL: 'debug' },
    );
    try {
      const banner = await vi.waitFor(
        () => {
          const match = /listening on (http:\/\/[\d.:]+)[\s\S]*Bearer (sk_live_[\w-]+)/.exec(cli.out());
          if (!match) throw new Error(`not ready:\n${cli.out()}\n${cli.err()}`);
          return { base: match[1] ?? '', secret: match[2] ?? '' };
        },
        { timeout: 30_000, interval: 50 },
      );
      expect(cli.out()).toContain(`dashboard ${banner.base}/dashboard`);
      const res = await fetch(`${banner.base}/send/mail`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${banner.secret}`,
          'content-type': 'application/json',
          'x-request-id': 'serve-req-1',
        },
        body: JSON.stringify({
          subject: `Hi ${MARKER}`,
          sender: 'demo@mailroom.local',
          message: `Body ${MARKER}`,
          recipients: ['ann@example.test'],
        }),
      });
      expect(res.status).toBe(200);
      const line = await vi.waitFor(
        () => {
          const found = cli
            .err()
            .split('\n')
            .filter((l) => l.startsWith('{'))
            .map((l) => JSON.parse(l) as LogLine)
            .find((l) => l.requestId === 'serve-req-1');
          if (!found) throw new Error(`no line for serve-req-1 in:\n${cli.err()}`);
          return found;
        },
        { timeout: 10_000, interval: 50 },
      );
      expect(line).toMatchObject({ level: 'debug', route: 'send', status: 200, method: 'POST' });
      expect(cli.err()).not.toContain(banner.secret);
      expect(cli.err()).not.toContain(MARKER);
    } finally {
      cli.stop();
      expect(await cli.done).toBe(0);
    }
  });

  it('refuses an unknown log level', async () => {
    const cli = run(['serve', '--port', '0', '--log-level', 'loud', '--database', join(dir, 'x.db')]);
    expect(await cli.done).toBe(2);
    expect(cli.err()).toContain('--log-level must be one of debug, info, warn, error, silent');
  });
});
