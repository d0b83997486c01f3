import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type CliIo, main } from '@mailroom/cli';
import { createMailroom, type ProjectRecord } from '@mailroom/core';
import { memoryTransport } from '@mailroom/memory';
import { sqlStore } from '@mailroom/sql';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';

/** An in-process CLI run: its exit code and everything it wrote. */
interface Run {
  code: number;
  out: string;
  err: string;
}

/** Runs `mailroom <argv>` in-process against `cwd`, capturing stdout and stderr. */
async function run(
  cwd: string,
  argv: string[],
  options: { env?: Record<string, string>; tty?: boolean } = {},
) {
  let out = '';
  let err = '';
  const io: CliIo = {
    stdout: { write: (s: string) => (out += s), isTTY: options.tty ?? false },
    stderr: { write: (s: string) => (err += s) },
    env: options.env ?? {},
    cwd,
    onShutdown: () => () => {},
  };
  const code = await main(argv, io);
  return { code, out, err } satisfies Run;
}

const SECRET = /sk_(live|sandbox)_[A-Za-z0-9_-]{16,}/g;

describe('mailroom admin commands', () => {
  let dir: string;
  let db: string;

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'mailroom-cli-'));
    db = join(dir, 'admin.db');
  });

  afterEach(() => {
    rmSync(dir, { recursive: true, force: true });
  });

  async function createProject(name = 'Acme'): Promise<{ project: ProjectRecord; secret: string }> {
    const res = await run(dir, ['project', 'create', name, '--database', db, '--json']);
    expect(res.code).toBe(0);
    return JSON.parse(res.out) as { project: ProjectRecord; secret: string };
  }

  it('project create prints a live secret once, and project list never shows it', async () => {
    const res = await run(dir, ['project', 'create', 'Acme', '--database', db]);
    expect(res.code).toBe(0);
    expect(res.err).toBe('');
    const secrets = res.out.match(SECRET) ?? [];
    expect(secrets).toHaveLength(1);
    expect(secrets[0]).toMatch(/^sk_live_/);
    expect(res.out).toMatch(/shown only this once/);

    const list = await run(dir, ['project', 'list', '--database', db]);
    expect(list.code).toBe(0);
    expect(list.out).toContain('Acme');
    expect(list.out).not.toMatch(SECRET);
    const listJson = await run(dir, ['project', 'list', '--database', db, '--json']);
    expect(listJson.out).not.toMatch(SECRET);
    expect(JSON.parse(listJson.out)).toEqual([expect.objectContaining({ name: 'Acme' })]);
  });

  it('project create --json gives parseable output whose secret authenticates', async () => {
    const res = await run(dir, ['project', 'create', 'Beta', '--sandbox', '--json'], {
      env: { MAILROOM_DATABASE_URL: db },
    });
    expect(res.code).toBe(0);
    expect(res.out.trim().split('\n')).toHaveLength(1);
    const parsed = JSON.parse(res.out) as { project: ProjectRecord; mode: string; secret: string };
    expect(parsed.project).toMatchObject({ id: expect.stringMatching(/^prj_/), name: 'Beta' });
    expect(parsed.mode).toBe('sandbox');
    expect(parsed.secret).toMatch(/^sk_sandbox_/);

    // The database the environment named holds the project, and the printed secret is its secret.
    const mailroom = createMailroom({ store: sqlStore({ url: db }), transport: memoryTransport() });
    try {
      const auth = await mailroom.authenticate(parsed.secret);
      expect(auth).toMatchObject({ project: { id: parsed.project.id }, mode: 'sandbox' });
    } finally {
      await mailroom.close();
    }
  });

  it('adds a sender, templates in three formats and an audience group, usable by a send', async () => {
    const { project, secret } = await createProject();
    const sender = await run(dir, [
      'sender',
      'add',
      '--project',
      project.id,
      'News@Acme.TEST',
      '--name',
      'Acme News',
      '--database',
      db,
      '--json',
    ]);
    expect(sender.code).toBe(0);
    expect(JSON.parse(sender.out)).toMatchObject({ address: 'News@acme.test', name: 'Acme News' });

    writeFileSync(
      join(dir, 'welcome.mjml'),
      '<mjml><mj-body><mj-section><mj-column><mj-text>Hi {{ recipient.firstName }}</mj-text></mj-column></mj-section></mj-body></mjml>',
    );
    writeFileSync(join(dir, 'plain.txt'), 'Hello {{ recipient.firstName }}');
    writeFileSync(join(dir, 'page.html'), '<p>Hello {{ recipient.firstName }}</p>');
    const mjml = await run(dir, [
      'template',
      'add',
      '--project',
      project.id,
      '--ref',
      'welcome',
      '--file',
      'welcome.mjml',
      '--subject',
      'Welcome {{ recipient.firstName }}',
      '--database',
      db,
      '--json',
    ]);
    expect(mjml).toMatchObject({ code: 0, err: '' });
    expect(JSON.parse(mjml.out)).toMatchObject({ ref: 'welcome', format: 'mjml', version: 1 });
    expect(JSON.parse(mjml.out)).not.toHaveProperty('source');
    const text = await run(dir, [
      'template',
      'add',
      '--project',
      project.id,
      '--ref',
      'plain',
      '--file',
      'plain.txt',
      '--database',
      db,
    ]);
    expect(text.code).toBe(0);
    expect(text.out).toContain('plain version 1 (text)');
    const again = await run(dir, [
      'template',
      'add',
      '--project',
      project.id,
      '--ref',
      'plain',
      '--file',
      'page.html',
      '--database',
      db,
      '--json',
    ]);
    expect(JSON.parse(again.out)).toMatchObject({ ref: 'plain', format: 'html', version: 2 });

    const group = await run(dir, [
      'audience',
      'create',
      '--project',
      project.id,
      '--ref',
      'vip',
      '--name',
      'VIPs',
      '--database',
      db,
      '--json',
    ]);
    expect(group.code).toBe(0);
    expect(JSON.parse(group.out)).toMatchObject({ ref: 'vip', name: 'VIPs' });

    // What the CLI stored is what the engine uses: the sender, the template's subject, the audience.
    const transport = memoryTransport();
    const mailroom = createMailroom({ store: sqlStore({ url: db }), transport });
    try {
      const sent = await mailroom.send(secret, {
        subject: 'Hi {{ recipient.firstName }}',
        sender: 'News@ACME.test',
        template: { ref: 'welcome' },
        recipients: [{ address: 'ada@example.test', name: 'Ada Lovelace' }],
        options: { acquiringAudience: 'vip' },
      });
      await mailroom.worker.drain();
      expect((await mailroom.getMailing(secret, sent.ref)).counts.sent).toBe(1);
      expect(transport.lastMessageTo('ada@example.test')?.html).toContain('Hi Ada');
    } finally {
      await mailroom.close();
    }
  });

  it('broadcast status reports counts by status, once as JSON and as a finished bar on a terminal', async () => {
    const { project, secret } = await createProject();
    const mailroom = createMailroom({ store: sqlStore({ url: db }), transport: memoryTransport() });
    let ref: string;
    try {
      await mailroom.admin.addSender(project.id, { address: 'news@acme.test' });
      const recipients = Array.from({ length: 12 }, (_, i) => ({ address: `m${i}@example.test` }));
      ref = (
        await mailroom.broadcast(secret, {
          subject: 'S',
          sender: 'news@acme.test',
          message: 'Hi',
          recipients,
        })
      ).ref;
      const json = await run(dir, [
        'broadcast',
        'status',
        '--project',
        project.id,
        ref,
        '--database',
        db,
        '--json',
      ]);
      expect(json.code).toBe(0);
      expect(JSON.parse(json.out)).toMatchObject({ ref, kind: 'broadcast', counts: { queued: 12, sent: 0 } });
      await mailroom.worker.drain();
    } finally {
      await mailroom.close();
    }
    const tty = await run(dir, ['broadcast', 'status', '--project', project.id, ref, '--database', db], {
      tty: true,
    });
    expect(tty.code).toBe(0);
    expect(tty.out).toContain('[##############################] 100%  12/12  completed  sent 12');
    expect(tty.out).toMatch(/Deliveries:\s+sent 12/);

    const missing = await run(dir, [
      'broadcast',
      'status',
      '--project',
      project.id,
      'bc_nope',
      '--database',
      db,
    ]);
    expect(missing.code).toBe(1);
    expect(missing.err).toMatch(/^mailroom: bc_nope not found\n$/);
  });

  it('bad flags and arguments exit 2 with a one-line error', async () => {
    const cases: string[][] = [
      ['project', 'create', 'Acme', '--bogus', '--database', db],
      ['project', 'create', '--database', db],
      ['project', 'create', 'A', 'B', '--database', db],
      ['project', 'frobnicate'],
      ['project'],
      ['launch'],
      ['sender', 'add', 'a@b.test', '--database', db],
      ['serve', '--port', 'eighty'],
      ['serve', '--port'],
      ['worker', '--concurrency', '0'],
      ['serve', '--smtp', 'smtp://127.0.0.1:1', '--outbox', dir],
      ['serve', '--smtp', 'http://127.0.0.1:1'],
      ['project', 'list', '--database', 'redis://127.0.0.1:1'],
      ['template', 'add', '--project', 'prj_x', '--ref', 'r', '--file', 'x.docx', '--database', db],
    ];
    for (const argv of cases) {
      const res = await run(dir, argv);
      expect({ argv, code: res.code }).toEqual({ argv, code: 2 });
      expect(res.out).toBe('');
      expect(res.err).toMatch(/^mailroom: [^\n]+\n$/);
    }
    // A flag without its value says so, whether another flag or nothing follows.
    for (const argv of [
      ['sender', 'add', '--project', '--name', 'X', 'a@b.test', '--database', db],
      ['webhook', 'list', '--database', db, '--project'],
    ]) {
      const res = await run(dir, argv);
      expect(res.code).toBe(2);
      expect(res.err).toMatch(
        /^mailroom: option '--project' needs a value \(see mailroom \w+ \w+ --help\)\n$/,
      );
    }
    const port = await run(dir, ['serve'], { env: { PORT: '99999' } });
    expect(port.code).toBe(2);
    expect(port.err).toContain('PORT must be an integer from 0 to 65535');
  });

  it('--help prints a command’s usage and exits 0', async () => {
    const top = await run(dir, ['--help']);
    expect(top.code).toBe(0);
    expect(top.out).toContain('project create');
    for (const argv of [
      ['serve', '--help'],
      ['worker', '-h'],
      ['help', 'template', 'add'],
      ['broadcast', 'status', '--help'],
    ]) {
      const res = await run(dir, argv);
      expect(res.code).toBe(0);
      expect(res.out).toMatch(/^Usage: mailroom /);
    }
    const none = await run(dir, []);
    expect(none.code).toBe(2);
  });

  it('an unknown project or a refused operation exits 1 with a one-line error', async () => {
    const res = await run(dir, ['sender', 'add', '--project', 'prj_missing', 'a@b.test', '--database', db]);
    expect(res.code).toBe(1);
    expect(res.err).toMatch(/^mailroom: project prj_missing not found[^\n]*\n$/);

    const { project } = await createProject();
    const args = ['audience', 'create', '--project', project.id, '--ref', 'vip', '--database', db];
    expect((await run(dir, args)).code).toBe(0);
    const dup = await run(dir, [...args, '--json']);
    expect(dup.code).toBe(1);
    expect(JSON.parse(dup.err)).toMatchObject({ error: { code: 'CONFLICT' } });
    // What exists, in words: never the database's own message (table, columns, constraint).
    const again = await run(dir, args);
    expect(again.code).toBe(1);
    expect(again.err).toBe(`mailroom: audience group vip already exists in project ${project.id}\n`);
    const sender = ['sender', 'add', '--project', project.id, 'news@acme.test', '--database', db];
    expect((await run(dir, sender)).code).toBe(0);
    const twice = await run(dir, sender);
    expect(twice.code).toBe(1);
    expect(twice.err).toBe(`mailroom: sender news@acme.test already exists in project ${project.id}\n`);

    const unreadable = await run(dir, [
      'template',
      'add',
      '--project',
      project.id,
      '--ref',
      'r',
      '--file',
      'gone.html',
      '--database',
      db,
    ]);
    expect(unreadable.code).toBe(1);
    expect(unreadable.err).toMatch(/^mailroom: cannot read \S+gone\.html: ENOENT[^\n]*\n$/);
  });

  it('an unreachable database exits 1 with a one-line error that hides the password', async () => {
    for (const url of ['postgres://app:hunter2@127.0.0.1:1/mail', 'mysql://app:hunter2@127.0.0.1:1/mail']) {
      const res = await run(dir, ['project', 'list', '--database', url]);
      expect(res.code).toBe(1);
      expect(res.err).toMatch(/^mailroom: cannot open the database [^\n]*ECONNREFUSED[^\n]*\n$/);
      expect(res.err).not.toContain('hunter2');
    }
    const fromEnv = await run(dir, ['project', 'create', 'X', '--json'], {
      env: { MAILROOM_DATABASE_URL: 'postgres://127.0.0.1:1/x' },
    });
    expect(fromEnv.code).toBe(1);
    expect(JSON.parse(fromEnv.err)).toMatchObject({ error: { code: 'STORE_FAILED' } });
  });
});
