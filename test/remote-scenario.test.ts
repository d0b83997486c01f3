/**
 * Issue 26's acceptance scenario: everything managed over HTTP with scoped keys, against a real
 * `mailroom serve` on 127.0.0.1 (SQLite in a temp directory, a real SMTP sink, a loopback CSV host that
 * serves byte ranges). Once through `@mailroom/client` and once through `mailroom --url URL --key KEY`:
 * a template created and previewed, a group filled by a CSV import, a broadcast to it (one member
 * suppressed), message status, the suppression lifted, a key created and rotated (the old key works in
 * its grace period, the new one too, the old one revoked gets 401). The remote CLI prints exactly what
 * the local CLI prints for the same state.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createMailroomClient, MailroomApiError, type MailroomClient } from '@mailroom/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningCli, runCli, startCli, waitForOutput } from './support/cli-harness.js';
import { type RangeHost, rangeHost } from './support/range-host.js';
import { type SmtpSink, startSmtpSink } from './support/smtp-sink.js';

const SENDER = 'news@acme.test';
const CSV = Buffer.from('email,name\nann@example.test,Ann\nbob@example.test,Bob\ncid@example.test,Cid\n');

const run = runCli;

describe('issue 26: manage everything over HTTP with scoped keys', () => {
  let dir: string;
  let db: string;
  let sink: SmtpSink;
  let host: RangeHost;
  let serve: RunningCli;
  let base: string;
  let projectId: string;
  let secret: string;
  let client: MailroomClient;

  const local = (argv: string[]) => run(dir, [...argv, '--project', projectId, '--database', db]);
  const remote = (argv: string[], key = secret) => run(dir, ['--url', base, '--key', key, ...argv]);
  /** Runs `argv` remotely and locally: both exit 0 and print the same bytes; the remote output. */
  const same = async (argv: string[]) => {
    const there = await remote(argv);
    const here = await local(argv);
    expect(there.code, `${argv.join(' ')}: ${there.err}`).toBe(0);
    expect(here.code, `${argv.join(' ')}: ${here.err}`).toBe(0);
    expect(there.out, argv.join(' ')).toBe(here.out);
    return there.out;
  };

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'mailroom-scenario-'));
    db = join(dir, 'mailroom.db');
    [sink, host] = await Promise.all([startSmtpSink(), rangeHost(CSV)]);
    const created = await run(dir, ['project', 'create', 'Acme', '--database', db, '--json']);
    expect(created.code, created.err).toBe(0);
    ({
      project: { id: projectId },
      secret,
    } = JSON.parse(created.out) as { project: { id: string }; secret: string });
    serve = startCli(dir, [
      'serve',
      '--port',
      '0',
      '--database',
      db,
      '--smtp',
      sink.url,
      '--allow-host',
      host.allow,
    ]);
    [, base = ''] = await waitForOutput(serve, /listening on (http:\/\/127\.0\.0\.1:\d+)/);
    client = createMailroomClient({ url: base, key: secret });
  }, 60_000);

  afterAll(async () => {
    serve?.stop();
    await serve?.done;
    await Promise.all([sink?.close(), host?.close()]);
    rmSync(dir, { recursive: true, force: true });
  });

  it('through the typed client', async () => {
    const { sender } = await client.senders.add({ address: SENDER, name: 'Acme News' });
    expect(sender).toMatchObject({ address: SENDER, name: 'Acme News', dkimSelector: null });
    expect((await client.senders.list()).senders.map((s) => s.address)).toEqual([SENDER]);

    // A template created, checked and previewed.
    const { template } = await client.templates.create({
      ref: 'welcome',
      format: 'html',
      source: '<p>Hi {{ recipient.name }}</p>',
      subject: 'Welcome {{ recipient.name }}',
    });
    expect(template).toMatchObject({ ref: 'welcome', version: 1, format: 'html' });
    const preview = await client.templates.preview('welcome', {
      recipient: { address: 'grace@example.test', name: 'Grace' },
    });
    expect(preview.subject).toBe('Welcome Grace');
    expect(preview.html).toContain('<p>Hi Grace</p>');
    const checked = await client.templates.validate('welcome', { source: '<p>{{ oops </p>' });
    expect(checked.valid).toBe(false);
    expect(checked.problems[0]).toMatchObject({ field: 'source', line: 1 });

    // A group filled by a CSV import, followed to its end.
    await client.audience.createGroup({ ref: 'members', name: 'Members' });
    const started = (await client.audience.startImport({ url: host.url, group: 'members' })).import;
    expect(started).toMatchObject({ id: expect.stringMatching(/^imp_/), group: 'members' });
    await expect
      .poll(async () => (await client.audience.getImport(started.id)).import.status, { timeout: 20_000 })
      .toBe('done');
    expect((await client.audience.getImport(started.id)).import.rowsDone).toBe(3);
    const members = await client.audience.listMembers('members');
    expect(members.profiles.map((p) => [p.address, p.name])).toEqual([
      ['ann@example.test', 'Ann'],
      ['bob@example.test', 'Bob'],
      ['cid@example.test', 'Cid'],
    ]);
    expect((await client.audience.listProfiles({ q: 'bo' })).profiles.map((p) => p.address)).toEqual([
      'bob@example.test',
    ]);
    const renamed = await client.audience.updateProfile('bob@example.test', { name: 'Robert' });
    expect(renamed.profile.name).toBe('Robert');
    expect((await client.audience.listGroups()).groups).toMatchObject([{ ref: 'members', members: 3 }]);

    // Cid is suppressed: the broadcast to the group reaches Ann and Robert only.
    const { suppression } = await client.suppressions.add({ address: 'cid@example.test', reason: 'manual' });
    expect(suppression).toMatchObject({ address: 'cid@example.test', reason: 'manual' });
    expect((await client.audience.getProfile('cid@example.test')).profile.suppression?.reason).toBe('manual');
    const { broadcastRef } = await client.broadcast({
      sender: SENDER,
      template: { ref: 'welcome' },
      audience: ['members'],
    });
    await sink.waitFor(2, 30_000);
    expect(sink.messages.map((m) => m.parsed.subject).sort()).toEqual(['Welcome Ann', 'Welcome Robert']);
    await expect
      .poll(async () => (await client.broadcasts.get(broadcastRef)).broadcast.status, { timeout: 20_000 })
      .toBe('completed');
    const status = (await client.broadcasts.get(broadcastRef)).broadcast;
    // The suppressed member is left out when the group is expanded: no delivery of it at all.
    expect(status.counts).toMatchObject({ sent: 2, failed: 0 });
    expect((await client.broadcasts.list()).broadcasts.map((b) => b.ref)).toEqual([broadcastRef]);

    // Message status by Message-ID (one recipient of the broadcast), and of a single message by ref.
    const messageId = sink.messages.find((m) => m.parsed.subject === 'Welcome Ann')?.parsed.messageId ?? '';
    const byId = (await client.messages.get(messageId)).message;
    expect(byId.recipients.map((r) => [r.address, r.status])).toEqual([['ann@example.test', 'sent']]);
    const sent = await client.send({
      sender: SENDER,
      template: { ref: 'welcome' },
      recipients: [{ address: 'dan@example.test', name: 'Dan' }],
    });
    await sink.waitFor(3, 30_000);
    await expect
      .poll(async () => (await client.messages.get(sent.ref)).message.recipients[0]?.status, {
        timeout: 20_000,
      })
      .toBe('sent');
    const single = (await client.messages.get(sent.ref)).message;
    expect(single.recipients[0]?.timeline.map((e) => e.type)).toContain('email.sent');

    // The suppression lifted: gone from the list; lifting again is a 404.
    await client.suppressions.lift('cid@example.test');
    expect((await client.suppressions.list({ q: 'cid' })).suppressions).toEqual([]);
    await expect(client.suppressions.lift('cid@example.test')).rejects.toMatchObject({
      status: 404,
      code: 'NOT_FOUND',
    });

    // A read key: reads, never writes.
    const made = await client.keys.create({ scope: 'read', mode: 'live' });
    const reader = createMailroomClient({ url: base, key: made.secret });
    expect((await reader.templates.list()).templates.map((t) => t.ref)).toEqual(['welcome']);
    await expect(reader.senders.add({ address: 'x@acme.test' })).rejects.toMatchObject({ status: 403 });
    // Rotated with an hour's grace: both keys work; the old one revoked gets 401.
    const rotated = await client.keys.rotate(made.key.id, { graceSeconds: 3600 });
    expect(rotated.previous).toMatchObject({
      id: made.key.id,
      state: 'expiring',
      replacedBy: rotated.key.id,
    });
    const successor = createMailroomClient({ url: base, key: rotated.secret });
    expect((await reader.broadcasts.list()).broadcasts).toHaveLength(1);
    expect((await successor.broadcasts.list()).broadcasts).toHaveLength(1);
    expect((await client.keys.revoke(made.key.id)).key.state).toBe('revoked');
    const refused = await reader.broadcasts.list().catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(MailroomApiError);
    expect(refused).toMatchObject({ status: 401, code: 'UNAUTHORIZED' });
    expect((await successor.templates.get('welcome')).template.version).toBe(1);
    const states = (await client.keys.list()).keys.map((k) => [k.id, k.state]);
    expect(states).toContainEqual([rotated.key.id, 'active']);
    expect(states).toContainEqual([made.key.id, 'revoked']);
  }, 90_000);

  it('through the remote CLI, printing what the local CLI prints', async () => {
    const file = join(dir, 'hello.html');
    writeFileSync(file, '<p>Hello {{ recipient.name }}</p>');
    const stored = await remote(['template', 'add', '--ref', 'hello', '--file', file, '--subject', 'Hello!']);
    expect([stored.code, stored.out, stored.err]).toEqual([
      0,
      'Stored template hello version 1 (html).\n',
      '',
    ]);
    // The same ref again: its next version, as on the database's machine.
    const again = await remote(['template', 'add', '--ref', 'hello', '--file', file, '--json']);
    expect(JSON.parse(again.out)).toMatchObject({ ref: 'hello', version: 2, subject: 'Hello!' });
    const preview = await same([
      'template',
      'preview',
      'hello',
      '--to',
      'eve@example.test',
      '--to-name',
      'Eve',
    ]);
    expect(preview).toContain('Subject: Hello!');
    expect(preview).toContain('<p>Hello Eve</p>');
    await same(['template', 'preview', 'hello', '--json']);
    await same(['template', 'list', '--json']);
    await same(['template', 'list']);
    await same(['sender', 'list']);

    // A group and its CSV import, followed by import-status.
    expect((await remote(['audience', 'create', '--ref', 'cli-group'])).out).toBe(
      'Created audience group cli-group.\n',
    );
    const imported = await remote([
      'audience',
      'import',
      '--group',
      'cli-group',
      '--csv',
      host.url,
      '--json',
    ]);
    expect(imported.code, imported.err).toBe(0);
    const { id } = JSON.parse(imported.out) as { id: string };
    await expect
      .poll(
        async () =>
          (JSON.parse((await remote(['audience', 'import-status', id, '--json'])).out) as { status: string })
            .status,
        { timeout: 20_000 },
      )
      .toBe('done');
    await same(['audience', 'import-status', id]);
    const profiles = await same(['audience', 'profiles', '--group', 'cli-group', '--json']);
    expect((JSON.parse(profiles) as { items: unknown[] }).items).toHaveLength(3);
    await same(['audience', 'profiles', '--q', 'ann', '--limit', '1']);
    await same(['audience', 'list', '--json']);
    await same(['audience', 'list']);

    // A suppression added and listed (same view on both sides), then lifted; lifting twice is refused alike.
    const suppressed = await remote(['suppression', 'add', 'ann@example.test', '--detail', 'asked by phone']);
    expect(suppressed.out).toMatch(/^Suppressed ann@example\.test {2}manual \(asked by phone\) {2}since /);
    await same(['suppression', 'list', '--json']);
    await same(['suppression', 'list', '--q', 'ann']);

    // A broadcast (sent with the client: the CLI does not send) to the group; its status on both sides.
    sink.clear();
    const { broadcastRef } = await client.broadcast({
      subject: 'Hi {{ recipient.name }}',
      sender: SENDER,
      message: '<p>Hi</p>',
      audience: ['cli-group'],
    });
    await sink.waitFor(2, 30_000);
    await expect
      .poll(async () => (await client.broadcasts.get(broadcastRef)).broadcast.status, { timeout: 20_000 })
      .toBe('completed');
    const status = await same(['broadcast', 'status', broadcastRef, '--json']);
    expect(JSON.parse(status)).toMatchObject({ ref: broadcastRef, counts: { sent: 2 } });
    await same(['broadcast', 'status', broadcastRef, '--no-watch']);
    await same(['broadcast', 'list', '--json']);
    await same(['broadcast', 'list', '--limit', '1']);
    const messageId = sink.messages[0]?.parsed.messageId ?? '';
    const message = await same(['message', 'status', messageId, '--json']);
    expect(JSON.parse(message)).toMatchObject({ ref: broadcastRef, recipients: [{ messageId }] });
    await same(['message', 'status', messageId]);

    expect((await remote(['suppression', 'lift', 'ann@example.test'])).out).toBe(
      'Lifted the suppression of ann@example.test.\n',
    );
    for (const json of [[], ['--json']]) {
      const there = await remote(['suppression', 'lift', 'ann@example.test', ...json]);
      const here = await local(['suppression', 'lift', 'ann@example.test', ...json]);
      expect([there.code, there.err]).toEqual([1, here.err]);
    }

    // A key created and rotated remotely: the old one works in its grace period, then is revoked (401).
    const made = JSON.parse((await remote(['key', 'create', '--scope', 'read', '--json'])).out) as {
      key: { id: string };
      secret: string;
    };
    const rotated = await remote(['key', 'rotate', made.key.id, '--grace', '1h', '--json']);
    expect(rotated.code, rotated.err).toBe(0);
    const next = JSON.parse(rotated.out) as {
      key: { id: string };
      secret: string;
      previous: { state: string };
    };
    expect(next.previous.state).toBe('expiring');
    for (const key of [made.secret, next.secret]) {
      const listed = await remote(['template', 'list', '--json'], key);
      expect(listed.code, listed.err).toBe(0);
    }
    // A read key is refused a write, with the server's words.
    const write = await remote(['sender', 'add', 'other@acme.test', '--json'], next.secret);
    expect([write.code, JSON.parse(write.err).error.code]).toEqual([1, 'FORBIDDEN']);
    expect((await remote(['key', 'revoke', made.key.id])).out).toBe(`Revoked key ${made.key.id}\n`);
    const revoked = await remote(['template', 'list', '--json'], made.secret);
    expect([revoked.code, JSON.parse(revoked.err).error.code]).toEqual([1, 'UNAUTHORIZED']);
    await same(['key', 'list', '--json']);
    await same(['key', 'list']);
  }, 120_000);

  it('removes what it made: a template, a sender, a group, a profile erased', async () => {
    await client.templates.create({ ref: 'gone', format: 'text', source: 'Bye' });
    expect(await client.templates.remove('gone')).toEqual({ ref: 'gone' });
    await expect(client.templates.get('gone')).rejects.toMatchObject({ status: 404 });
    await client.senders.add({ address: 'tmp@acme.test' });
    const removed = await remote(['sender', 'remove', 'tmp@acme.test', '--json']);
    expect([removed.code, removed.out]).toEqual([0, '{"removed":"tmp@acme.test"}\n']);
    expect((await client.senders.list()).senders.map((s) => s.address)).not.toContain('tmp@acme.test');
    await expect(client.senders.remove('tmp@acme.test')).rejects.toMatchObject({ code: 'NOT_FOUND' });
    expect(await client.audience.deleteGroup('cli-group')).toEqual({ group: 'cli-group' });
    const erased = (await client.audience.eraseProfile('cid@example.test')).erased;
    expect(erased.address).toBe('cid@example.test');
    await expect(client.audience.getProfile('cid@example.test')).rejects.toMatchObject({ status: 404 });
    expect((await client.audience.listGroups()).groups).toMatchObject([{ ref: 'members', members: 2 }]);
  });
});
