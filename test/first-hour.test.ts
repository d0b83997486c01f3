import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { cliCommandOf } from '../packages/cli/src/server/demo-project.js';
import { type RunningCli, runCli, startCli, waitForOutput } from './support/cli-harness.js';
import { DashboardClient } from './support/dashboard-session.js';
import { callApi } from './support/http-harness.js';

/**
 * What a newcomer trips on in the first hour (issue 37), through `mailroom serve` on a SQLite file in a
 * temporary folder: the commands the server prints run as printed from where it was started (and the file
 * they name is there), a restart says how to get a secret, a busy port names `--port`, and keys say what
 * they are for and have the one scope the command line gives.
 */
describe('the first hour with mailroom serve', () => {
  let dir: string;
  const running: RunningCli[] = [];

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'mailroom-first-hour-'));
  });
  afterEach(async () => {
    for (const cli of running.splice(0)) {
      cli.stop();
      await cli.done;
    }
    rmSync(dir, { recursive: true, force: true });
  });

  const serve = (extra: string[] = []): RunningCli => {
    const cli = startCli(dir, ['serve', '--port', '0', '--outbox', join(dir, 'outbox'), ...extra]);
    running.push(cli);
    return cli;
  };
  const stop = async (cli: RunningCli): Promise<void> => {
    cli.stop();
    expect(await cli.done, cli.err).toBe(0);
    running.splice(running.indexOf(cli), 1);
  };
  /** A printed `npx mailroom ...` line as the in-process CLI's argv (the harness stands for npx). */
  const argvOf = (line: string): string[] => line.replace(/^npx mailroom /, '').split(' ');

  it('prints an npx command for the template, writes the welcome.mjml it names, and the command works', async () => {
    const server = serve();
    const [line] = await waitForOutput(server, /npx mailroom template add --project prj_\w+ [^\n]+/);
    expect(line).toMatch(/^npx mailroom template add --project prj_\w+ --ref welcome --file welcome\.mjml$/);
    expect(server.out).toContain('edit welcome.mjml (the demo template, written there now)');
    const written = readFileSync(join(dir, 'welcome.mjml'), 'utf8');
    expect(written).toMatch(/^<mjml>/);
    expect(written).toContain(line);
    writeFileSync(join(dir, 'welcome.mjml'), written.replace('Hello', 'Hi there'));
    const add = await runCli(dir, argvOf(line));
    expect(add.code, add.err).toBe(0);
    expect(add.out).toMatch(/Stored template welcome version 2/);
  });

  it('keeps a welcome.mjml that is already there', async () => {
    writeFileSync(join(dir, 'welcome.mjml'), 'mine');
    const server = serve();
    await waitForOutput(server, /template add --project prj_\w+/);
    expect(server.out).toContain('edit welcome.mjml (a file of yours, kept as it was)');
    expect(readFileSync(join(dir, 'welcome.mjml'), 'utf8')).toBe('mine');
  });

  it('a clone started through its package scripts prints npx --yes pnpm@10 mailroom', () => {
    expect(cliCommandOf({})).toBe('npx mailroom');
    expect(cliCommandOf({ npm_lifecycle_event: 'start', npm_package_name: 'mailroom' })).toBe(
      'npx --yes pnpm@10 mailroom',
    );
    // An app's own `start` script running `mailroom serve`: the app has @mailroom/cli installed.
    expect(cliCommandOf({ npm_lifecycle_event: 'start', npm_package_name: 'my-app' })).toBe('npx mailroom');
  });

  it('a restart on the existing database says how to get a secret, and those commands work', async () => {
    const first = serve(['--database', 'data.db']);
    await waitForOutput(first, /Its live secret/);
    const projectId = /\((prj_\w+)\)/.exec(first.out)?.[1] ?? '';
    await stop(first);
    expect(existsSync(join(dir, 'data.db'))).toBe(true);

    const again = serve(['--database', 'data.db']);
    const [, list = '', create = ''] = await waitForOutput(
      again,
      /No secret is shown for an existing database[^\n]*\n\s+(npx mailroom project list --database data\.db)\s+#[^\n]*\n\s+(npx mailroom key create [^#\n]+?)\s+#/,
    );
    expect(again.out).not.toContain('sk_live_');
    const listed = await runCli(dir, argvOf(list));
    expect(listed.code, listed.err).toBe(0);
    expect(listed.out).toContain(projectId);
    const key = await runCli(dir, argvOf(create.replace('PROJECT_ID', projectId).replace('NAME', 'laptop')));
    expect(key.code, key.err).toBe(0);
    expect(key.out).toMatch(/Created key key_\w+ "laptop" \(full\)/);
    expect(key.out).toMatch(/Secret \(shown once, keep it\): sk_live_/);
  });

  it('a second serve on a busy port names --port', async () => {
    const first = serve();
    const [, port] = await waitForOutput(first, /listening on http:\/\/127\.0\.0\.1:(\d+)/);
    const second = await runCli(dir, ['serve', '--port', String(port), '--outbox', join(dir, 'outbox')]);
    expect(second.code).toBe(1);
    expect(second.err).toContain(`port ${port} on 127.0.0.1 is in use`);
    expect(second.err).toContain('--port N');
    expect(second.err).toContain('EADDRINUSE');
  });

  it('keys: one scope per key, a name shown by the CLI, HTTP, the remote CLI and the dashboard', async () => {
    const server = serve();
    const [, url = '', secret = ''] = await waitForOutput(
      server,
      /curl -s (http:\/\/127\.0\.0\.1:\d+)\/send\/mail -H "Authorization: Bearer (sk_live_[\w-]+)"/,
    );
    const projectId = /\((prj_\w+)\)/.exec(server.out)?.[1] ?? '';
    const local = ['--project', projectId];

    // Two scopes, or a list, are refused: nothing is made.
    for (const scopes of [
      ['--scope', 'sending', '--scope', 'read'],
      ['--scope', 'sending,read'],
      ['--scope', 'read', '--scope', 'read'],
    ]) {
      const refused = await runCli(dir, ['key', 'create', ...local, ...scopes]);
      expect(refused.code, scopes.join(' ')).toBe(2);
      expect(refused.err).toContain('a key has one scope');
      expect(refused.err).toContain('give --scope once');
    }
    // Any other single-value flag given twice is refused too, naming both values.
    const twice = await runCli(dir, [
      'key',
      'create',
      ...local,
      '--scope',
      'read',
      '--name',
      'a',
      '--name',
      'b',
    ]);
    expect(twice.code).toBe(2);
    expect(twice.err).toContain("--name is given more than once ('a', then 'b'): give it once");

    const ci = await runCli(dir, ['key', 'create', ...local, '--scope', 'sending', '--name', 'CI pipeline']);
    expect(ci.code, ci.err).toBe(0);
    expect(ci.out).toMatch(/Created key key_\w+ "CI pipeline" \(sending\)/);
    const plain = await runCli(dir, ['key', 'create', ...local, '--scope', 'read']);
    expect(plain.out).toMatch(/Created key key_\w+ \(read\)/);

    // HTTP: a name in, the name out; a bad name names the field.
    const made = await callApi<{ data: { key: { id: string; name: string | null } } }>(
      url,
      'POST',
      '/keys',
      { scope: 'read', name: '  Marketing site  ' },
      secret,
    );
    expect(made.status, made.text).toBe(200);
    expect(made.json.data.key.name).toBe('Marketing site');
    const bad = await callApi<{ code: string; issues: Array<{ path: string[] }> }>(
      url,
      'POST',
      '/keys',
      { scope: 'read', name: 'two\nlines' },
      secret,
    );
    expect(bad.status).toBe(400);
    expect(bad.json).toMatchObject({ code: 'VALIDATION_FAILED', issues: [{ path: ['name'] }] });
    const listed = await callApi<{ data: { keys: Array<{ name: string | null; scope: string }> } }>(
      url,
      'GET',
      '/keys',
      undefined,
      secret,
    );
    expect(listed.json.data.keys.map((k) => [k.scope, k.name])).toEqual([
      ['full', null],
      ['sending', 'CI pipeline'],
      ['read', null],
      ['read', 'Marketing site'],
    ]);

    // The remote CLI sends the name and lists it; the local CLI lists it; a rotation passes it on.
    const remote = ['--url', url, '--key', secret];
    const viaHttp = await runCli(dir, [...remote, 'key', 'create', '--scope', 'sending', '--name', 'Shop']);
    expect(viaHttp.code, viaHttp.err).toBe(0);
    expect(viaHttp.out).toMatch(/Created key key_\w+ "Shop" \(sending\)/);
    const remoteList = await runCli(dir, [...remote, 'key', 'list']);
    expect(remoteList.out).toMatch(/sending {2}any sender {2}active .+ "Shop"\n/);
    const localList = await runCli(dir, ['key', 'list', ...local]);
    expect(localList.out).toMatch(/key_\w+ {2}sk_live_.{4}… {2}sending .+ "CI pipeline"\n/);
    const ciId = /Created key (key_\w+)/.exec(ci.out)?.[1] ?? '';
    const rotated = await runCli(dir, ['key', 'rotate', ...local, ciId, '--json']);
    expect(JSON.parse(rotated.out).key.name).toBe('CI pipeline');

    // A remote webhook to a loopback URL: the advice names the server's flag, not one --url refuses.
    const hook = await runCli(dir, [...remote, 'webhook', 'add', '--url', 'http://127.0.0.1:9/hook']);
    expect(hook.code).toBe(1);
    expect(hook.err).toContain(
      `The server at ${url} decides: to allow this host, start its mailroom serve (and mailroom worker) with --allow-host 127.0.0.1:9`,
    );
    expect(hook.err).not.toContain('(CLI: --allow-host');

    // The dashboard's Keys page shows the names.
    const dashboard = new DashboardClient(url);
    expect((await dashboard.post('/dashboard/sign-in', { secret })).status).toBe(303);
    const page = await (await dashboard.get('/dashboard/keys')).text();
    expect(page).toContain('<strong>CI pipeline</strong>');
    expect(page).toContain('<strong>Marketing site</strong>');
  });
});

describe('the demo sender', () => {
  let dir: string;
  let server: RunningCli | undefined;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'mailroom-first-hour-'));
  });
  afterEach(async () => {
    server?.stop();
    await server?.done;
    rmSync(dir, { recursive: true, force: true });
  });

  it('its first send warns without advising to publish mailroom.local, which cannot be published', async () => {
    server = startCli(dir, ['serve', '--port', '0', '--outbox', join(dir, 'outbox')]);
    const cli = server;
    const [, url = '', secret = ''] = await waitForOutput(
      cli,
      /curl -s (http:\/\/127\.0\.0\.1:\d+)\/send\/mail -H "Authorization: Bearer (sk_live_[\w-]+)"/,
    );
    const sent = await callApi(
      url,
      'POST',
      '/send/mail',
      {
        sender: 'demo@mailroom.local',
        template: { ref: 'welcome' },
        recipients: [{ address: 'ada@example.test', name: 'Ada' }],
      },
      secret,
    );
    expect(sent.status, sent.text).toBe(200);
    await vi.waitFor(() => expect(cli.err).toContain('not verified'), { timeout: 20_000, interval: 50 });
    // The outbox's .eml reads in an editor: its text and HTML parts are quoted-printable, not base64.
    const eml = await vi.waitFor(
      () => {
        const files = readdirSync(join(dir, 'outbox')).filter((file) => file.endsWith('.eml'));
        if (files.length !== 1) throw new Error(`${files.length} .eml files`);
        return readFileSync(join(dir, 'outbox', files[0] ?? ''), 'utf8');
      },
      { timeout: 20_000, interval: 50 },
    );
    expect(eml).toMatch(
      /Content-Type: text\/html; charset=utf-8\r?\nContent-Transfer-Encoding: quoted-printable/i,
    );
    expect(eml).not.toMatch(/Content-Transfer-Encoding: base64/i);
    expect(eml).toContain('Hello Ada,');
    const warning = cli.err.split('\n').find((line) => line.includes('not verified')) ?? '';
    expect(warning).toContain('mailroom.local is a local-only name');
    expect(warning).toContain('it cannot be published in DNS');
    expect(warning).not.toContain('domain add mailroom.local');
  });

  it('message status shows the subject each recipient got, not the Liquid source', async () => {
    server = startCli(dir, ['serve', '--port', '0', '--outbox', join(dir, 'outbox')]);
    const cli = server;
    const [, url = '', secret = ''] = await waitForOutput(
      cli,
      /curl -s (http:\/\/127\.0\.0\.1:\d+)\/send\/mail -H "Authorization: Bearer (sk_live_[\w-]+)"/,
    );
    const projectId = /\((prj_\w+)\)/.exec(cli.out)?.[1] ?? '';
    const sent = await callApi<{ data: { ref: string } }>(
      url,
      'POST',
      '/send/mail',
      {
        subject: 'Hello {{ recipient.firstName }}',
        sender: 'demo@mailroom.local',
        template: { ref: 'welcome' },
        recipients: [
          { address: 'ada@example.test', name: 'Ada Lovelace' },
          { address: 'grace@example.test', name: 'Grace Hopper' },
        ],
      },
      secret,
    );
    expect(sent.status, sent.text).toBe(200);
    const shown = await runCli(dir, ['message', 'status', '--project', projectId, sent.json.data.ref]);
    expect(shown.code, shown.err).toBe(0);
    expect(shown.out).toMatch(/^Subject: +Hello Ada$/m);
    expect(shown.out).toContain('  subject: Hello Grace');
    expect(shown.out).not.toContain('{{');
    const read = await callApi<{
      data: { message: { subject: string; recipients: Array<{ subject: string }> } };
    }>(url, 'GET', `/messages/${sent.json.data.ref}`, undefined, secret);
    expect(read.json.data.message.subject).toBe('Hello {{ recipient.firstName }}');
    expect(read.json.data.message.recipients.map((r) => r.subject).sort()).toEqual([
      'Hello Ada',
      'Hello Grace',
    ]);
  });

  it('a delivery to a suppressed address shows no attempt: nothing was handed to the transport', async () => {
    server = startCli(dir, ['serve', '--port', '0', '--outbox', join(dir, 'outbox')]);
    const cli = server;
    const [, url = '', secret = ''] = await waitForOutput(
      cli,
      /curl -s (http:\/\/127\.0\.0\.1:\d+)\/send\/mail -H "Authorization: Bearer (sk_live_[\w-]+)"/,
    );
    const projectId = /\((prj_\w+)\)/.exec(cli.out)?.[1] ?? '';
    const suppressed = await runCli(dir, ['suppression', 'add', '--project', projectId, 'ada@example.test']);
    expect(suppressed.code, suppressed.err).toBe(0);
    const sent = await callApi<{ data: { ref: string } }>(
      url,
      'POST',
      '/send/mail',
      { sender: 'demo@mailroom.local', template: { ref: 'welcome' }, recipients: 'ada@example.test' },
      secret,
    );
    expect(sent.status, sent.text).toBe(200);
    const status = await vi.waitFor(
      async () => {
        const shown = await runCli(dir, ['message', 'status', '--project', projectId, sent.json.data.ref]);
        expect(shown.out).toMatch(/^ada@example\.test {2}suppressed/m);
        return shown.out;
      },
      { timeout: 20_000, interval: 100 },
    );
    expect(status).toMatch(/^ada@example\.test {2}suppressed {2}attempts 0 /m);
  });
});

describe('a Liquid typo', () => {
  let dir: string;
  const running: RunningCli[] = [];
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'mailroom-first-hour-'));
  });
  afterEach(async () => {
    for (const cli of running.splice(0)) {
      cli.stop();
      await cli.done;
    }
    rmSync(dir, { recursive: true, force: true });
  });

  it('renders empty by default; --strict-variables names it in the preview and fails the send', async () => {
    const server = startCli(dir, [
      'serve',
      '--port',
      '0',
      '--outbox',
      join(dir, 'outbox'),
      '--strict-variables',
    ]);
    running.push(server);
    const [, url = '', secret = ''] = await waitForOutput(
      server,
      /curl -s (http:\/\/127\.0\.0\.1:\d+)\/send\/mail -H "Authorization: Bearer (sk_live_[\w-]+)"/,
    );
    const projectId = /\((prj_\w+)\)/.exec(server.out)?.[1] ?? '';
    writeFileSync(join(dir, 'typo.html'), '<p>Hello {{ recipient.fristName }}!</p>');
    const added = await runCli(dir, [
      'template',
      'add',
      '--project',
      projectId,
      '--ref',
      'typo',
      '--file',
      'typo.html',
      '--subject',
      'Hi',
    ]);
    expect(added.code, added.err).toBe(0);

    const lenient = await runCli(dir, ['template', 'preview', '--project', projectId, 'typo']);
    expect(lenient.code, lenient.err).toBe(0);
    expect(lenient.out).toContain('Hello !');
    const strict = await runCli(dir, [
      'template',
      'preview',
      '--project',
      projectId,
      'typo',
      '--strict-variables',
    ]);
    expect(strict.code).toBe(1);
    expect(strict.err).toContain('fristName');
    const remote = await runCli(dir, [
      '--url',
      url,
      '--key',
      secret,
      'template',
      'preview',
      'typo',
      '--strict-variables',
    ]);
    expect(remote.code).toBe(2);
    expect(remote.err).toContain(
      "--strict-variables is not taken with --url: the server's own settings apply",
    );

    const sent = await callApi<{ data: { ref: string } }>(
      url,
      'POST',
      '/send/mail',
      { sender: 'demo@mailroom.local', template: { ref: 'typo' }, recipients: 'ada@example.test' },
      secret,
    );
    expect(sent.status, sent.text).toBe(200);
    const status = await vi.waitFor(
      async () => {
        const shown = await runCli(dir, ['message', 'status', '--project', projectId, sent.json.data.ref]);
        expect(shown.out).toMatch(/^ada@example\.test {2}failed/m);
        return shown.out;
      },
      { timeout: 20_000, interval: 100 },
    );
    expect(status).toContain('fristName');
  });
});
