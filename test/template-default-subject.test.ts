import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type CliIo, main } from '@mailroom/cli';
import { createMailroom, type Mailroom, type MailroomError } from '@mailroom/core';
import { createHandler } from '@mailroom/http';
import { type MemoryTransport, memoryStore, memoryTransport } from '@mailroom/memory';
import { sqlStore } from '@mailroom/sql';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  DEMO_SENDER,
  DEMO_TEMPLATE_REF,
  ensureDemoProject,
} from '../packages/cli/src/server/demo-project.js';

// A template's subject is the default when a request gives none (spec: subject is required; our
// extension lets a template carry it). A request with neither is a 400 naming `subject` and the way out.

async function engine(): Promise<{ mailroom: Mailroom; transport: MemoryTransport; secret: string }> {
  const transport = memoryTransport();
  const mailroom = createMailroom({ store: memoryStore(), transport });
  const { project, secret } = await mailroom.admin.createProject({ name: 'P' });
  await mailroom.admin.addSender(project.id, { address: 'shop@p.test', name: 'Shop' });
  await mailroom.admin.createTemplate(project.id, {
    ref: 'receipt',
    format: 'text',
    source: 'Thanks for order {{ order }}',
    subject: 'Your receipt {{ order }}',
  });
  await mailroom.admin.createTemplate(project.id, { ref: 'bare', format: 'text', source: 'No subject here' });
  return { mailroom, transport, secret };
}

const withTemplate = (ref: string) => ({
  sender: 'shop@p.test',
  template: { ref, variables: { order: 'A-17' } },
  recipients: [{ address: 'ada@example.test' }],
});

describe('template default subject', () => {
  it('engine: send and broadcast without subject use the template subject; a given subject wins', async () => {
    const { mailroom, transport, secret } = await engine();
    await mailroom.send(secret, withTemplate('receipt'));
    await mailroom.broadcast(secret, { ...withTemplate('receipt'), recipients: ['bob@example.test'] });
    await mailroom.send(secret, {
      ...withTemplate('receipt'),
      subject: 'Custom',
      recipients: 'cy@example.test',
    });
    await mailroom.worker.drain();
    expect(transport.lastMessageTo('ada@example.test')?.subject).toBe('Your receipt A-17');
    expect(transport.lastMessageTo('bob@example.test')?.subject).toBe('Your receipt A-17');
    expect(transport.lastMessageTo('cy@example.test')?.subject).toBe('Custom');
  });

  it('engine: neither a subject nor a template default is a 400 naming subject and how to give one', async () => {
    const { mailroom, secret } = await engine();
    const noDefault = (await mailroom
      .send(secret, withTemplate('bare'))
      .catch((e: unknown) => e)) as MailroomError;
    expect(noDefault.code).toBe('VALIDATION_FAILED');
    expect(noDefault.status).toBe(400);
    expect(noDefault.issues?.[0]?.path).toEqual(['subject']);
    expect(noDefault.message).toContain('subject: Required: template bare has no default subject');
    expect(noDefault.message).toContain('mailroom template add --subject');

    const message = { sender: 'shop@p.test', message: 'Hi', recipients: 'ada@example.test' };
    const noSubject = (await mailroom.send(secret, message).catch((e: unknown) => e)) as MailroomError;
    expect(noSubject.code).toBe('VALIDATION_FAILED');
    expect(noSubject.issues?.map((i) => i.path)).toEqual([['subject']]);
    expect(noSubject.message).toMatch(/^Invalid request: subject: Required/);
  });

  it('HTTP: POST /send/mail without subject is 200 with a template default, else 400 naming subject', async () => {
    const { mailroom, transport, secret } = await engine();
    const handler = createHandler(mailroom);
    const post = (body: unknown) =>
      handler({
        method: 'POST',
        path: '/send/mail',
        headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json' },
        body: new TextEncoder().encode(JSON.stringify(body)),
      });
    const ok = await post(withTemplate('receipt'));
    expect(ok.status).toBe(200);
    await mailroom.worker.drain();
    expect(transport.lastMessageTo('ada@example.test')?.subject).toBe('Your receipt A-17');

    const bad = await post(withTemplate('bare'));
    expect(bad.status).toBe(400);
    const body = JSON.parse(bad.body) as { code: string; message: string; issues: Array<{ path: string[] }> };
    expect(body.code).toBe('VALIDATION_FAILED');
    expect(body.issues[0]?.path).toEqual(['subject']);
    expect(body.message).toContain('--subject');
  });

  describe('CLI and demo', () => {
    let dir: string;
    beforeEach(() => {
      dir = mkdtempSync(join(tmpdir(), 'mailroom-subject-'));
    });
    afterEach(() => rmSync(dir, { recursive: true, force: true }));

    async function run(argv: string[]): Promise<{ code: number; out: string; err: string }> {
      let out = '';
      let err = '';
      const io: CliIo = {
        stdout: { write: (s: string) => (out += s) },
        stderr: { write: (s: string) => (err += s) },
        env: {},
        cwd: dir,
        onShutdown: () => () => {},
      };
      return { code: await main(argv, io), out, err };
    }

    it('template add --subject stores the default a later send uses', async () => {
      const db = join(dir, 'm.db');
      const created = await run(['project', 'create', 'Shop', '--database', db, '--json']);
      const { project, secret } = JSON.parse(created.out) as { project: { id: string }; secret: string };
      expect(
        (await run(['sender', 'add', 'shop@p.test', '--project', project.id, '--database', db])).code,
      ).toBe(0);
      writeFileSync(join(dir, 'receipt.txt'), 'Thanks for order {{ order }}');
      const added = await run([
        'template',
        'add',
        '--project',
        project.id,
        '--ref',
        'receipt',
        '--file',
        'receipt.txt',
        '--subject',
        'Your receipt {{ order }}',
        '--database',
        db,
      ]);
      expect(added.err).toBe('');
      expect(added.code).toBe(0);

      const transport = memoryTransport();
      const mailroom = createMailroom({ store: sqlStore({ url: db }), transport });
      try {
        await mailroom.send(secret, withTemplate('receipt'));
        await mailroom.worker.drain();
        expect(transport.lastMessageTo('ada@example.test')?.subject).toBe('Your receipt A-17');
      } finally {
        await mailroom.close();
      }
    });

    it("the demo's welcome template sends without a subject", async () => {
      const transport = memoryTransport();
      const store = memoryStore();
      const mailroom = createMailroom({ store, transport });
      const demo = await ensureDemoProject(mailroom, store);
      if (!demo) throw new Error('no demo project');
      await mailroom.send(demo.secret, {
        sender: DEMO_SENDER,
        template: { ref: DEMO_TEMPLATE_REF },
        recipients: [{ address: 'ada@example.test', name: 'Ada Lovelace' }],
      });
      await mailroom.worker.drain();
      expect(transport.lastMessageTo('ada@example.test')?.subject).toBe('Welcome to Mailroom, Ada');
    });
  });
});
