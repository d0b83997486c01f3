/**
 * Issue 31, pause and resume from the CLI: `mailroom broadcast pause|resume`, `sending pause|resume`,
 * `destination pause|resume` and `pauses`, on the database (`--project`, `--database`) and through a real
 * `mailroom serve` on 127.0.0.1 (`--url`, `--key`): the same pauses, printed the same either way, and the
 * same refusals.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createMailroomClient, type MailroomClient } from '@mailroom/client';
import { createMailroom } from '@mailroom/core';
import { memoryTransport } from '@mailroom/memory';
import { sqlStore } from '@mailroom/sql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningCli, runCli, startCli, waitForOutput } from './support/cli-harness.js';
import { type SmtpSink, startSmtpSink } from './support/smtp-sink.js';

const SENDER = 'news@acme.test';

const run = runCli;

describe('pause and resume from the CLI, on the database and through mailroom serve', () => {
  let dir: string;
  let db: string;
  let sink: SmtpSink;
  let serve: RunningCli;
  let base: string;
  let projectId: string;
  let secret: string;
  let client: MailroomClient;

  const local = (argv: string[]) => run(dir, [...argv, '--project', projectId, '--database', db]);
  const remote = (argv: string[]) => run(dir, ['--url', base, '--key', secret, ...argv]);
  /** A broadcast due tomorrow (nothing is sent while the test runs). */
  const laterBroadcast = async () =>
    (
      await client.broadcast({
        subject: 'News',
        sender: SENDER,
        message: '<p>News</p>',
        recipients: ['b1@example.test'],
        options: { scheduleFor: new Date(Date.now() + 86_400_000).toISOString() },
      })
    ).broadcastRef;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'mailroom-pause-cli-'));
    db = join(dir, 'mailroom.db');
    sink = await startSmtpSink();
    const created = await run(dir, ['project', 'create', 'Acme', '--database', db, '--json']);
    expect(created.code, created.err).toBe(0);
    ({
      project: { id: projectId },
      secret,
    } = JSON.parse(created.out) as { project: { id: string }; secret: string });
    expect((await run(dir, ['sender', 'add', SENDER, '--project', projectId, '--database', db])).code).toBe(
      0,
    );
    serve = startCli(dir, ['serve', '--port', '0', '--database', db, '--smtp', sink.url]);
    [, base = ''] = await waitForOutput(serve, /listening on (http:\/\/127\.0\.0\.1:\d+)/);
    client = createMailroomClient({ url: base, key: secret });
  }, 60_000);

  afterAll(async () => {
    serve?.stop();
    await serve?.done;
    await sink?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('pauses a broadcast here, lists it the same both ways, resumes it remotely', async () => {
    const ref = await laterBroadcast();
    const paused = await local(['broadcast', 'pause', ref, '--reason', 'wrong link']);
    expect(paused.code, paused.err).toBe(0);
    expect(paused.out).toContain(`Paused broadcast ${ref}.`);
    expect(paused.out).toMatch(new RegExp(`Paused: broadcast ${ref}, by operator since \\S+, until resumed`));
    expect(paused.out).toContain('reason: wrong link');

    const listedHere = await local(['pauses']);
    const listedThere = await remote(['pauses']);
    expect(listedThere.code, listedThere.err).toBe(0);
    expect(listedThere.out).toBe(listedHere.out);
    const jsonHere = await local(['pauses', '--json']);
    const jsonThere = await remote(['pauses', '--json']);
    expect(jsonThere.out).toBe(jsonHere.out);
    expect(JSON.parse(jsonThere.out)).toEqual([
      expect.objectContaining({ scope: 'broadcast', target: ref, by: 'operator', reason: 'wrong link' }),
    ]);

    const resumed = await remote(['broadcast', 'resume', ref]);
    expect(resumed.code, resumed.err).toBe(0);
    expect(resumed.out).toBe(`Resumed broadcast ${ref}.\nNothing is paused.\n`);
    expect((await client.pauses.list()).pauses).toEqual([]);
  });

  it('pauses the sending and a destination remotely for some minutes, and resumes them here', async () => {
    const sending = await remote(['sending', 'pause', '--reason', 'audit']);
    expect(sending.code, sending.err).toBe(0);
    expect(sending.out).toContain('Paused: the sending, by operator');
    const destination = await remote([
      'destination',
      'pause',
      'Microsoft',
      '--domains',
      'outlook.com,hotmail.com',
      '--minutes',
      '30',
      '--json',
    ]);
    expect(destination.code, destination.err).toBe(0);
    const pauses = JSON.parse(destination.out) as Array<{ scope: string; until: string | null }>;
    expect(pauses.map((p) => p.scope)).toEqual(['project', 'destination']);
    const until = Date.parse(pauses[1]?.until ?? '');
    expect(until - Date.now()).toBeGreaterThan(29 * 60_000);
    expect(until - Date.now()).toBeLessThanOrEqual(30 * 60_000);
    const text = await local(['pauses']);
    expect(text.out).toMatch(
      /Paused: destination microsoft \(outlook\.com, hotmail\.com\), by operator since \S+, until \d{4}-/,
    );
    expect((await remote(['pauses'])).out).toBe(text.out);

    expect((await local(['sending', 'resume'])).out).toContain('Resumed the sending.');
    const last = await local(['destination', 'resume', 'microsoft']);
    expect(last.out).toBe('Resumed destination microsoft.\nNothing is paused.\n');
  });

  it("shows a guard's pause with its rule and figures, the same both ways", async () => {
    // The guard's pause as the reputation guard writes it (its rules have their own test, pause-guard).
    const engine = createMailroom({ store: sqlStore({ url: `sqlite:${db}` }), transport: memoryTransport() });
    const now = new Date();
    await engine.store.addPause(
      {
        projectId,
        scope: 'destination',
        target: 'yahoo.com',
        domains: ['yahoo.com'],
        by: 'guard',
        reason: 'sender-side refusals above 10 %',
        rule: {
          name: 'destination.sender-side',
          signal: 'sender-side',
          count: 12,
          attempts: 80,
          rate: 0.15,
          threshold: 0.1,
          minimum: 10,
          windowMs: 900_000,
          since: now.toISOString(),
        },
        createdAt: now,
        until: new Date(now.getTime() + 30 * 60_000),
      },
      now,
    );
    await engine.close();
    const here = await local(['pauses']);
    expect(here.out).toContain(`Paused: destination yahoo.com, by guard since ${now.toISOString()}`);
    expect(here.out).toContain('  reason: sender-side refusals above 10 %');
    expect(here.out).toContain(
      '  rule: destination.sender-side: 12 sender-side of 80 attempts over 15 min (15.0% > 10.0%, minimum 10)',
    );
    expect((await remote(['pauses'])).out).toBe(here.out);
    expect((await remote(['pauses', '--json'])).out).toBe((await local(['pauses', '--json'])).out);
    await remote(['destination', 'resume', 'yahoo.com']);
    expect((await local(['pauses'])).out).toBe('Nothing is paused.\n');
  });

  it('refuses the same way here and there: an unknown broadcast, a cancelled one, bad minutes', async () => {
    for (const side of [local, remote]) {
      const unknown = await side(['broadcast', 'pause', 'bc_nothing']);
      expect(unknown.code).toBe(1);
      expect(unknown.err).toContain('bc_nothing not found');
    }
    const ref = await laterBroadcast();
    await client.cancelBroadcast(ref);
    const here = await local(['broadcast', 'pause', ref]);
    const there = await remote(['broadcast', 'pause', ref]);
    expect(here.code).toBe(1);
    expect(here.err).toContain(`Broadcast ${ref} is cancelled; there is nothing to pause`);
    expect(there.err).toBe(here.err);
    const minutes = await remote(['destination', 'pause', 'gmail.com', '--minutes', '0']);
    expect(minutes.code).toBe(2);
    expect(minutes.err).toContain('--minutes');
    expect((await client.pauses.list()).pauses).toEqual([]);
  });
});
