import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createMailroom, type InboundMail } from '@mailroom/core';
import { memoryTransport } from '@mailroom/memory';
import { sqlStore } from '@mailroom/sql';
import nodemailer from 'nodemailer';
import { afterAll, describe, expect, it } from 'vitest';
import { childEntry } from './support/child-bundle.js';
import { type DnsZoneServer, startDnsZone } from './support/dns-zone.js';
import { waitUntil } from './support/wait.js';
import { startWebhookReceiver, type WebhookReceiver } from './support/webhook-receiver.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const BIN = fileURLToPath(new URL('../packages/cli/src/bin.ts', import.meta.url));
const INBOX = 'in.acme.test';
/** Messages sent before the kill, while it happens, and after the restart. */
const BEFORE = 24;
const DURING = 24;
const AFTER = 12;
/**
 * How long the endpoint answers 503 from its first POST: the minute, scaled with the retry
 * schedule below (its attempts run for about a minute, so a message outlives the outage by far).
 */
const DOWN_MS = 6_000;
const SCHEDULE = '300,600,1200,2400,4800,9600,19200,30000';

/**
 * `mailroom serve` as users run it, a real process on the sources: bundled (support/child-bundle.ts), as
 * the published `mailroom` bin is, one process (tsx's CLI would run the server in a child of its own,
 * which a SIGKILL of the CLI leaves running) and a quarter of the start-up CPU of `node --import tsx`.
 */
async function serve(db: string, dir: string, receiver: WebhookReceiver, zone: DnsZoneServer) {
  let out = '';
  let err = '';
  const child: ChildProcess = spawn(
    process.execPath,
    [
      await childEntry(BIN),
      'serve',
      '--port',
      '0',
      '--database',
      db,
      '--outbox',
      join(dir, 'outbox'),
      '--bounce-domain',
      'bounces.acme.test',
      '--inbound-port',
      '0',
      '--inbound-host',
      '127.0.0.1',
      '--allow-host',
      receiver.host,
      '--dns-server',
      zone.address,
      '--webhook-retry-schedule',
      SCHEDULE,
    ],
    { cwd: ROOT, env: { ...process.env, MAILROOM_LOG_LEVEL: 'warn' } },
  );
  child.stdout?.on('data', (chunk: Buffer) => {
    out += chunk.toString();
  });
  child.stderr?.on('data', (chunk: Buffer) => {
    err += chunk.toString();
  });
  const exited = new Promise<string>((resolve) =>
    child.once('exit', (code, signal) => resolve(signal ?? String(code))),
  );
  const smtpPort = (async () => {
    await waitUntil(() => /inbound SMTP on [^\s:]+:\d+/.test(out) || child.exitCode !== null, 120_000);
    const m = /inbound SMTP on [^\s:]+:(\d+)/.exec(out);
    if (!m) throw new Error(`serve did not start:\n${out}\n${err}`);
    return Number(m[1]);
  })();
  return { child, exited, smtpPort, err: () => err };
}

describe('received mail through a dead webhook endpoint and a SIGKILL of mailroom serve', () => {
  const dir = mkdtempSync(join(tmpdir(), 'mailroom-crash-receiving-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('every message answered 250 reaches the app once the endpoint is back, none twice', {
    timeout: 240_000,
  }, async () => {
    const db = join(dir, 'mailroom.db');
    const zone = await startDnsZone({ 'sender.test': { TXT: ['v=spf1 ip4:127.0.0.1 -all'] } });
    const receiver = await startWebhookReceiver();
    let downUntil: number | undefined;
    receiver.respond = () => {
      downUntil ??= Date.now() + DOWN_MS;
      return Date.now() < downUntil ? 503 : 204;
    };
    const admin = createMailroom({
      store: sqlStore({ url: `sqlite:${db}` }),
      transport: memoryTransport(),
      fetch: { allowHosts: [receiver.host] },
    });
    const { secret } = await admin.admin.createProject({ name: 'Acme' });
    const added = await admin.webhooks.add(secret, { url: receiver.url, events: ['email.received'] });
    receiver.secret = added.secret;
    await admin.receiving.addRoute(secret, {
      domain: INBOX,
      pattern: 'support',
      destination: { kind: 'webhook', endpointId: added.endpoint.id },
    });
    await admin.close();

    const accepted = new Set<string>();
    const sendAll = async (port: number, from: number, count: number, lanes = 4) => {
      const transport = nodemailer.createTransport({
        host: '127.0.0.1',
        port,
        secure: false,
        ignoreTLS: true,
        pool: true,
        maxConnections: lanes,
      });
      let next = from;
      const lane = async () => {
        while (next < from + count) {
          const n = next++;
          try {
            await transport.sendMail({
              from: 'ana@sender.test',
              to: `support@${INBOX}`,
              subject: `m${n}`,
              text: `Message ${n}`,
            });
            accepted.add(`m${n}`);
          } catch {
            // Cut by the kill: not accepted, so the sender still has it (a real MTA would try again).
          }
        }
      };
      await Promise.all(Array.from({ length: lanes }, lane));
      transport.close();
    };

    const first = await serve(db, dir, receiver, zone);
    try {
      const port1 = await first.smtpPort;
      await sendAll(port1, 0, BEFORE);
      expect(accepted.size).toBe(BEFORE);
      // The endpoint is down: the first POSTs fail, none is answered 2xx.
      await receiver.waitFor((r) => r.length > 0, 60_000);
      // SIGKILL while messages are still arriving on four connections.
      const during = sendAll(port1, BEFORE, DURING);
      await waitUntil(() => accepted.size >= BEFORE + DURING / 2, 60_000);
      first.child.kill('SIGKILL');
      await during;
      expect(await first.exited).toBe('SIGKILL');
    } finally {
      if (first.child.exitCode === null && first.child.signalCode === null) first.child.kill('SIGKILL');
    }
    const acceptedAtKill = accepted.size;
    expect(acceptedAtKill).toBeGreaterThanOrEqual(BEFORE + DURING / 2);
    expect(receiver.received.every((r) => r.status === 503)).toBe(true);

    const second = await serve(db, dir, receiver, zone);
    try {
      await sendAll(await second.smtpPort, BEFORE + DURING, AFTER);
      const delivered = () =>
        new Set(
          receiver.received
            .filter((r) => r.status === 204 && r.verified)
            .map((r) => String((r.payload.data.inbound as InboundMail).subject)),
        );
      await waitUntil(() => [...accepted].every((s) => delivered().has(s)), 180_000);
      // Every accepted message reached the app.
      expect([...accepted].filter((s) => !delivered().has(s))).toEqual([]);
      const oks = receiver.received.filter((r) => r.status === 204);
      // None twice: one 2xx per message, and one webhook-id (and one stored message) per subject.
      const bySubject = new Map<string, Set<string>>();
      for (const r of receiver.received) {
        const inbound = r.payload.data.inbound as InboundMail;
        const ids = bySubject.get(String(inbound.subject)) ?? new Set<string>();
        bySubject.set(String(inbound.subject), ids.add(`${r.id} ${inbound.id}`));
      }
      expect([...bySubject].filter(([, ids]) => ids.size !== 1)).toEqual([]);
      expect(oks.length).toBe(new Set(oks.map((r) => r.id)).size);
      // Retries happened across the restart (the outage outlived the first process).
      expect(receiver.received.filter((r) => r.status === 503).length).toBeGreaterThan(0);
      second.child.kill('SIGTERM');
      expect(await second.exited, second.err()).toBe('0');
    } finally {
      if (second.child.exitCode === null && second.child.signalCode === null) second.child.kill('SIGKILL');
      await receiver.close();
      await zone.close();
    }
    // A message cut by the kill may have been stored (committed before its 250 was written): it is
    // delivered once too, and the sender, never having had a 250, may send it again (SMTP's rule).
    const store = sqlStore({ url: `sqlite:${db}` });
    const reader = createMailroom({ store, transport: memoryTransport() });
    const [project] = await store.listProjects();
    if (!project) throw new Error('no project');
    const stored = await reader.receiving.listMessages({ project, mode: 'live' }, { limit: 100 });
    const storedSubjects = stored.items.map((m) => String(m.subject));
    expect(new Set(storedSubjects).size).toBe(storedSubjects.length);
    expect([...accepted].every((s) => storedSubjects.includes(s))).toBe(true);
    await reader.close();
  });
});
