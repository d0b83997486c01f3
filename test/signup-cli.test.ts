/**
 * Issue 38, signup forms from the CLI: `mailroom forms`, `form create|update|delete` and `topic create
 * --double-opt-in on`, on the database (`--project`, `--database`) and through a real `mailroom serve` on
 * 127.0.0.1 (`--url`, `--key`): the same answers either way; the typed client's `forms`; and a signup to
 * the served endpoint that is pending until its mailed link is confirmed.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createMailroomClient, type MailroomClient } from '@mailroom/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningCli, runCli, startCli, waitForOutput } from './support/cli-harness.js';
import { type SmtpSink, startSmtpSink } from './support/smtp-sink.js';

describe('signup forms from the CLI, on the database and through mailroom serve', () => {
  let dir: string;
  let db: string;
  let sink: SmtpSink;
  let serve: RunningCli;
  let base: string;
  let projectId: string;
  let secret: string;
  let client: MailroomClient;

  const local = (argv: string[]) => runCli(dir, [...argv, '--project', projectId, '--database', db]);
  const remote = (argv: string[]) => runCli(dir, ['--url', base, '--key', secret, ...argv]);

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'mailroom-signup-cli-'));
    db = join(dir, 'mailroom.db');
    sink = await startSmtpSink();
    const created = await runCli(dir, ['project', 'create', 'Acme', '--database', db, '--json']);
    expect(created.code, created.err).toBe(0);
    ({
      project: { id: projectId },
      secret,
    } = JSON.parse(created.out) as { project: { id: string }; secret: string });
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

  it('creates forms here and there, lists them the same both ways, versions the text, deletes', async () => {
    const sender = await local(['sender', 'add', 'news@acme.test']);
    expect(sender.code, sender.err).toBe(0);
    const topic = await local(['topic', 'create', 'news', '--name', 'News', '--double-opt-in', 'on']);
    expect(topic.code, topic.err).toBe(0);
    expect((await remote(['topics'])).out).toContain('news\topt-in double-opt-in\tpublic\tNews');
    expect((await local(['topic', 'update', 'news', '--double-opt-in', 'maybe'])).code).toBe(2);

    const made = await local([
      'form',
      'create',
      '--name',
      'Footer',
      '--topic',
      'news',
      '--consent-text',
      'Send me the news',
      '--sender',
      'news@acme.test',
      '--origins',
      'https://www.acme.test',
      '--json',
    ]);
    expect(made.code, made.err).toBe(0);
    const form = JSON.parse(made.out) as { ref: string; consentVersion: number; allowedOrigins: string[] };
    expect(form).toMatchObject({ consentVersion: 1, allowedOrigins: ['https://www.acme.test'] });
    const there = await remote([
      'form',
      'create',
      '--name',
      'Sidebar',
      '--topic',
      'news',
      '--consent-text',
      'Yes please',
      '--sender',
      'news@acme.test',
    ]);
    expect(there.code, there.err).toBe(0);
    expect(there.out).toMatch(/Created form frm_\w+: POST \/subscribe\/frm_\w+/);
    const here = await local(['forms']);
    expect(here.code, here.err).toBe(0);
    expect((await remote(['forms'])).out).toBe(here.out);
    expect(here.out).toContain(`${form.ref}\ttopic news\tv1\tFooter`);

    const updated = await remote(['form', 'update', form.ref, '--consent-text', 'Send me the news, v2']);
    expect(updated.code, updated.err).toBe(0);
    expect(updated.out).toContain('consent text v2');
    const listed = await client.forms.get(form.ref);
    expect(listed.form.consentTexts.map((t) => t.version)).toEqual([1, 2]);
    // An unknown topic is refused, nothing written.
    const refused = await local([
      'form',
      'create',
      '--name',
      'X',
      '--topic',
      'nope',
      '--consent-text',
      'x',
      '--sender',
      'news@acme.test',
    ]);
    expect(refused.code).not.toBe(0);
    expect((await client.forms.list()).forms).toHaveLength(2);

    // The served endpoint: a signup is pending, and the mailed link confirms it.
    const res = await fetch(`${base}/subscribe/${form.ref}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', origin: 'https://www.acme.test' },
      body: JSON.stringify({ email: 'ann@example.test' }),
    });
    expect(res.status).toBe(200);
    const [mail] = await sink.waitFor(1, 20_000);
    const link = /href="([^"]*\/confirm\/[^"]+)"/.exec(String(mail?.parsed.html))?.[1] ?? '';
    expect(link.startsWith(base)).toBe(true);
    expect((await remote(['contact', 'topics', 'ann@example.test'])).out).toContain('news\tpending\tpublic');
    expect((await fetch(link, { method: 'POST' })).status).toBe(200);
    expect((await local(['contact', 'topics', 'ann@example.test'])).out).toContain(
      'news\tsubscribed\tpublic',
    );
    const history = await local(['contact', 'consent', 'ann@example.test']);
    expect(history.out).toContain(`signup news=pending\tform:${form.ref}`);
    expect(history.out).toContain(`confirm news=subscribed\tform:${form.ref}`);

    const removed = await remote(['form', 'delete', form.ref]);
    expect(removed.code, removed.err).toBe(0);
    expect((await local(['forms'])).out).not.toContain(form.ref);
  });
});
