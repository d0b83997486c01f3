/**
 * `@mailroom/client` and `mailroom --url URL --key KEY <command>` against a real `mailroom serve` on
 * 127.0.0.1 (SQLite, a real SMTP sink, a webhook receiver, a DNS zone on loopback): the typed client
 * adds a webhook, adds and lists domains, sends, broadcasts, cancels and reads events, and its refusals
 * carry the spec's error shape; the remote CLI prints exactly what the local CLI prints for the same
 * command (`--json` and text) and refuses what only makes sense locally (the management commands are in
 * test/remote-scenario.test.ts).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createMailroomClient, MailroomApiError, type MailroomClient } from '@mailroom/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningCli, runCli, startCli, waitForOutput } from './support/cli-harness.js';
import { type DnsZoneServer, startDnsZone } from './support/dns-zone.js';
import { type SmtpSink, startSmtpSink } from './support/smtp-sink.js';
import { startWebhookReceiver, type WebhookReceiver } from './support/webhook-receiver.js';

const SENDER = 'news@acme.test';

const run = runCli;

describe('the typed client and the remote CLI against mailroom serve', () => {
  let dir: string;
  let db: string;
  let sink: SmtpSink;
  let receiver: WebhookReceiver;
  let dns: DnsZoneServer;
  let serve: RunningCli;
  let base: string;
  let projectId: string;
  let secret: string;
  let client: MailroomClient;

  /** The same admin command on the database (`--project`, `--database`) and through the API. */
  const local = (argv: string[]) => run(dir, [...argv, '--project', projectId, '--database', db]);
  const remote = (argv: string[]) => run(dir, ['--url', base, '--key', secret, ...argv]);

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'mailroom-client-'));
    db = join(dir, 'mailroom.db');
    [sink, receiver, dns] = await Promise.all([startSmtpSink(), startWebhookReceiver(), startDnsZone({})]);
    const created = await run(dir, ['project', 'create', 'Acme', '--database', db, '--json']);
    expect(created.code, created.err).toBe(0);
    ({
      project: { id: projectId },
      secret,
    } = JSON.parse(created.out) as { project: { id: string }; secret: string });
    expect((await run(dir, ['sender', 'add', SENDER, '--project', projectId, '--database', db])).code).toBe(
      0,
    );
    serve = startCli(dir, [
      'serve',
      '--port',
      '0',
      '--database',
      db,
      '--smtp',
      sink.url,
      '--allow-host',
      receiver.host,
      '--dns-server',
      dns.address,
    ]);
    [, base = ''] = await waitForOutput(serve, /listening on (http:\/\/127\.0\.0\.1:\d+)/);
    client = createMailroomClient({ url: base, key: secret });
  }, 60_000);

  afterAll(async () => {
    serve?.stop();
    await serve?.done;
    await Promise.all([sink?.close(), receiver?.close(), dns?.close()]);
    rmSync(dir, { recursive: true, force: true });
  });

  it('adds a webhook, sends, broadcasts and reads the events, typed end to end', async () => {
    const added = await client.webhooks.add({ url: receiver.url, events: ['email.sent'] });
    expect(added.secret).toMatch(/^whsec_/);
    receiver.secret = added.secret;
    const { webhooks } = await client.webhooks.list();
    expect(webhooks.map((w) => [w.id, w.url, w.events, w.state])).toEqual([
      [added.webhook.id, receiver.url, ['email.sent'], 'healthy'],
    ]);

    const sent = await client.send(
      { subject: 'Hello', sender: SENDER, message: '<p>Hello</p>', recipients: ['ada@example.test'] },
      { idempotencyKey: 'first-send' },
    );
    expect(sent.ref).toMatch(/^msg_/);
    // The same key and body: the first answer again, nothing sent twice.
    const replayed = await client.send(
      { subject: 'Hello', sender: SENDER, message: '<p>Hello</p>', recipients: ['ada@example.test'] },
      { idempotencyKey: 'first-send' },
    );
    expect(replayed.ref).toBe(sent.ref);

    const initial = await client.broadcast({
      subject: 'News',
      sender: SENDER,
      message: '<p>News for {{ recipient.address }}</p>',
      recipients: ['b1@example.test', 'b2@example.test'],
    });
    const batch = await client.broadcast({
      broadcastRef: initial.broadcastRef,
      recipients: ['b3@example.test', 'b2@example.test'],
    });
    expect(batch.batch).toMatchObject({ seq: 2, inserted: 1 });

    await sink.waitFor(4, 30_000);
    const subjects = sink.messages.map((m) => m.parsed.subject).sort();
    expect(subjects).toEqual(['Hello', 'News', 'News', 'News']);
    await receiver.waitFor((received) => received.filter((r) => r.verified).length >= 4, 30_000);

    // Every email.sent, read a page of two at a time by following `next`.
    const addresses: string[] = [];
    let after: string | undefined;
    for (let page = 0; page < 10; page++) {
      const { events, next } = await client.listEvents({
        types: 'email.sent',
        limit: 2,
        ...(after ? { after } : {}),
      });
      for (const event of events) addresses.push(String(event.data.delivery?.address));
      if (!next) break;
      after = next;
    }
    expect(addresses.sort()).toEqual([
      'ada@example.test',
      'b1@example.test',
      'b2@example.test',
      'b3@example.test',
    ]);
    const ofBroadcast = await client.listEvents({ mailingRef: initial.broadcastRef, types: 'email.sent' });
    expect(ofBroadcast.events.map((e) => e.data.mailing?.ref)).toEqual(Array(3).fill(initial.broadcastRef));
  }, 60_000);

  it('sends a batch, partial and strict, typed end to end (sendBatch)', async () => {
    const item = (to: string) => ({
      subject: 'Receipt',
      sender: SENDER,
      message: '<p>Thanks</p>',
      recipients: to,
    });
    const partial = await client.sendBatch(
      { mode: 'partial', items: [item('batch-1@example.test'), item('not-an-address')] },
      { idempotencyKey: 'client-batch' },
    );
    expect(partial).toMatchObject({ mode: 'partial', accepted: 1, refused: 1 });
    expect(partial.items[0]?.ref).toMatch(/^msg_/);
    expect(partial.items[1]?.error?.issues[0]?.path.slice(0, 2)).toEqual(['items', 1]);
    const strict = (await client
      .sendBatch({ items: [item('batch-2@example.test'), item('not-an-address')] })
      .catch((e: unknown) => e)) as MailroomApiError;
    expect(strict).toMatchObject({ status: 400, code: 'VALIDATION_FAILED' });
  });

  it('reschedules and cancels a scheduled broadcast', async () => {
    const later = new Date(Date.now() + 86_400_000).toISOString();
    const scheduled = await client.broadcast({
      subject: 'Later',
      sender: SENDER,
      message: '<p>Later</p>',
      recipients: ['c1@example.test'],
      options: { scheduleFor: later },
    });
    expect(scheduled.broadcast.status).toBe('scheduled');
    const moved = new Date(Date.now() + 2 * 86_400_000).toISOString();
    const rescheduled = await client.rescheduleBroadcast(scheduled.broadcastRef, moved);
    expect(rescheduled.broadcast.status).toBe('scheduled');
    const cancelled = await client.cancelBroadcast(scheduled.broadcastRef);
    expect(cancelled.broadcast.status).toBe('cancelled');
  });

  it('adds and lists domains; verifies through the server’s DNS', async () => {
    const { domain } = await client.domains.add({ domain: 'Client.Acme.TEST', keyType: 'ed25519' });
    expect(domain).toMatchObject({ domain: 'client.acme.test', state: 'pending', check: null });
    expect(domain.keys[0]?.algorithm).toBe('ed25519');
    const { domains } = await client.domains.list();
    expect(domains.map((d) => d.domain)).toEqual(['client.acme.test']);
    // Nothing is published in the loopback zone: every required record is missing.
    const checked = await client.domains.verify('client.acme.test');
    expect(checked.domain.check).toBe('failed');
    expect(checked.domain.findings?.find((f) => f.kind === 'dkim')?.state).toBe('missing');
  });

  it('rejects a refused call with a MailroomApiError carrying the spec’s error shape', async () => {
    const refused = await client
      .send({ subject: 'x', sender: 'nobody@elsewhere.test', message: 'x', recipients: ['a@example.test'] })
      .catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(MailroomApiError);
    const error = refused as MailroomApiError;
    expect(error).toMatchObject({ status: 403, code: 'SENDER_NOT_ALLOWED' });
    expect(error.body).toMatchObject({ statusCode: 403, code: 'SENDER_NOT_ALLOWED', message: error.message });
    expect(error.requestId).toMatch(/\S/);

    const invalid = (await client
      .send({ subject: 'x', sender: SENDER, message: 'x', recipients: [] })
      .catch((e: unknown) => e)) as MailroomApiError;
    expect(invalid).toMatchObject({ status: 400, code: 'VALIDATION_FAILED' });
    expect(invalid.body.issues?.length).toBeGreaterThan(0);

    const stranger = createMailroomClient({ url: base, key: 'sk_live_not-a-key-of-anyone-at-all' });
    await expect(stranger.webhooks.list()).rejects.toMatchObject({ status: 401, code: 'UNAUTHORIZED' });
    await expect(client.domains.get('nope.acme.test')).rejects.toMatchObject({
      status: 404,
      code: 'NOT_FOUND',
    });
    // Not the API's mount point: whatever answers, the rejection is a MailroomApiError with a code.
    const lost = createMailroomClient({ url: `${base}/not-the-api/`, key: secret });
    await expect(lost.domains.list()).rejects.toMatchObject({
      name: 'MailroomApiError',
      status: 404,
      code: 'NOT_FOUND',
    });
    // The whole document through `api`: the same typed paths, refusals thrown the same way.
    const { data } = await client.api.GET('/webhooks');
    expect(data?.data.webhooks).toHaveLength(1);
    await expect(
      client.api.DELETE('/webhooks/{id}', { params: { path: { id: 'wh_nope' } } }),
    ).rejects.toBeInstanceOf(MailroomApiError);
  });

  it('prints what the local CLI prints, --json and text, for the webhook and domain commands', async () => {
    const hook = await remote([
      'webhook',
      'add',
      '--url',
      receiver.url,
      '--events',
      'email.failed',
      '--json',
    ]);
    expect(hook.code, hook.err).toBe(0);
    const { webhook } = JSON.parse(hook.out) as { webhook: { id: string }; secret: string };
    const disabled = await remote(['webhook', 'disable', webhook.id, '--json']);
    expect(disabled.code, disabled.err).toBe(0);
    expect(JSON.parse(disabled.out)).toMatchObject({ id: webhook.id, enabled: false, state: 'disabled' });
    const added = await remote(['domain', 'add', 'cli.acme.test', '--selector', 's1']);
    expect(added.code, added.err).toBe(0);
    expect(added.out).toContain(
      `Then run: mailroom --url ${base} --key $MAILROOM_KEY domain verify cli.acme.test`,
    );

    for (const argv of [
      ['webhook', 'list', '--json'],
      ['webhook', 'list'],
      ['domain', 'list', '--json'],
      ['domain', 'list'],
      // Remotely, then again locally: the same state, so the same view.
      ['webhook', 'enable', webhook.id, '--json'],
      ['webhook', 'disable', webhook.id],
      ['webhook', 'disable', webhook.id, '--json'],
    ]) {
      const there = await remote(argv);
      const here = await local(argv);
      expect(there.code, there.err).toBe(0);
      expect(here.code, here.err).toBe(0);
      expect(there.out, argv.join(' ')).toBe(here.out);
      expect(there.out.length).toBeGreaterThan(10);
    }
    const removed = await remote(['webhook', 'remove', webhook.id, '--json']);
    expect([removed.code, JSON.parse(removed.out)]).toEqual([0, { removed: webhook.id }]);
    const lists = await Promise.all([
      remote(['webhook', 'list', '--json']),
      local(['webhook', 'list', '--json']),
    ]);
    expect(JSON.parse(lists[0].out)).toHaveLength(1);
    expect(lists[0].out).toBe(lists[1].out);

    // The same refusal, the same words and code: the server's NOT_FOUND is the engine's.
    for (const json of [[], ['--json']]) {
      const there = await remote(['webhook', 'remove', 'wh_nope', ...json]);
      const here = await local(['webhook', 'remove', 'wh_nope', ...json]);
      expect([there.code, there.err]).toEqual([1, here.err]);
      expect(here.code).toBe(1);
    }

    // A domain verified remotely is checked by the server (its --dns-server): exit 1, nothing published.
    const verify = await remote(['domain', 'verify', 'cli.acme.test', '--json']);
    expect(verify.code).toBe(1);
    expect(JSON.parse(verify.out)).toMatchObject({ domain: 'cli.acme.test', check: 'failed' });
  });

  it('takes MAILROOM_URL and MAILROOM_KEY, and a --database or --project over them', async () => {
    const fromEnv = await run(dir, ['domain', 'list', '--json'], {
      MAILROOM_URL: base,
      MAILROOM_KEY: secret,
    });
    expect(fromEnv.code, fromEnv.err).toBe(0);
    expect(fromEnv.out).toBe((await local(['domain', 'list', '--json'])).out);
    // The flag wins over the environment: this one opens the database.
    const withDatabase = await run(
      dir,
      ['domain', 'list', '--project', projectId, '--database', db, '--json'],
      {
        MAILROOM_URL: 'http://127.0.0.1:9',
        MAILROOM_KEY: secret,
      },
    );
    expect(withDatabase.code, withDatabase.err).toBe(0);
    expect(withDatabase.out).toBe(fromEnv.out);
    // So does --project: the database is then the default one, ./mailroom.db of the directory.
    const withProject = await run(dir, ['domain', 'list', '--project', projectId, '--json'], {
      MAILROOM_URL: 'http://127.0.0.1:9',
      MAILROOM_KEY: secret,
    });
    expect(withProject.code, withProject.err).toBe(0);
    expect(withProject.out).toBe(fromEnv.out);
  });

  it('refuses what only runs locally; runs the management commands remotely', async () => {
    for (const argv of [
      ['serve'],
      ['worker'],
      ['inbound'],
      ['project', 'create', 'X'],
      ['project', 'list'],
    ]) {
      const refused = await remote(argv);
      expect([refused.code, refused.out], argv.join(' ')).toEqual([2, '']);
      expect(refused.err).toMatch(
        /^mailroom: mailroom .+ on (this|the database's) machine.*: it does not take --url/,
      );
    }
    const withProject = await remote(['webhook', 'list', '--project', projectId]);
    expect(withProject.code).toBe(2);
    expect(withProject.err).toContain('--project is not taken with --url: the key names the project');
    const withDns = await remote(['domain', 'list', '--dns-server', dns.address]);
    expect(withDns.code).toBe(2);
    expect(withDns.err).toContain("--dns-server is not taken with --url: the server's own settings apply");
    const keyless = await run(dir, ['--url', base, 'webhook', 'list']);
    expect([keyless.code, keyless.err]).toEqual([2, expect.stringContaining('--url needs --key')]);

    // The commands that once had no route now run remotely, refusing as the engine does on the database.
    for (const json of [[], ['--json']]) {
      const there = await remote(['broadcast', 'status', 'brd_x', '--no-watch', ...json]);
      const here = await local(['broadcast', 'status', 'brd_x', '--no-watch', ...json]);
      expect([there.code, there.err]).toEqual([1, here.err]);
      expect(here.code).toBe(1);
    }
    const sender = await remote(['sender', 'add', 'other@acme.test', '--name', 'Other', '--json']);
    expect([sender.code, JSON.parse(sender.out)]).toEqual([
      0,
      { address: 'other@acme.test', name: 'Other', dkimSelector: null, createdAt: expect.any(String) },
    ]);
  });

  it('names the server it cannot reach, and a key it refuses', async () => {
    const unreachable = await run(dir, ['--url', 'http://127.0.0.1:9', '--key', secret, 'webhook', 'list']);
    expect(unreachable.code).toBe(1);
    expect(unreachable.err).toMatch(
      /^mailroom: cannot reach the Mailroom API at http:\/\/127\.0\.0\.1:9: fetch failed/,
    );
    const wrongKey = await run(dir, ['--url', base, '--key', 'sk_live_wrong', 'domain', 'list', '--json']);
    expect(wrongKey.code).toBe(1);
    expect(JSON.parse(wrongKey.err)).toMatchObject({ error: { code: 'UNAUTHORIZED' } });
  });
});
