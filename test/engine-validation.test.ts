import { createMailroom, type Mailroom, type MailroomError } from '@mailroom/core';
import { memoryStore, memoryTransport } from '@mailroom/memory';
import { beforeAll, describe, expect, it } from 'vitest';

// Every rule of the spec's tables, through the engine: a clear VALIDATION_FAILED naming the field, and
// nothing written. The request parser's own tests cover normalization in depth.
describe('spec rules through the engine', () => {
  let mailroom: Mailroom;
  let secret: string;
  let projectId: string;

  beforeAll(async () => {
    mailroom = createMailroom({ store: memoryStore(), transport: memoryTransport() });
    const p = await mailroom.admin.createProject({ name: 'P' });
    secret = p.secret;
    projectId = p.project.id;
    await mailroom.admin.addSender(projectId, { address: 'from@p.test' });
    await mailroom.admin.createTemplate(projectId, { ref: 't', format: 'text', source: 'T' });
  });

  const ok = {
    subject: 'S',
    sender: { address: 'from@p.test' },
    message: 'm',
    recipients: [{ address: 'r@x.test' }],
  };
  const many = (n: number) => Array.from({ length: n }, (_, i) => ({ address: `r${i}@x.test` }));

  const sendCases: Array<[string, Record<string, unknown>, string]> = [
    ['subject missing', { ...ok, subject: undefined }, 'subject'],
    ['sender missing', { ...ok, sender: undefined }, 'sender'],
    ['sender address missing', { ...ok, sender: { name: 'x' } }, 'sender'],
    ['neither message nor template', { ...ok, message: undefined }, 'message'],
    ['template without ref', { ...ok, message: undefined, template: { variables: {} } }, 'template'],
    ['recipients missing', { ...ok, recipients: undefined }, 'recipients'],
    ['11 recipients', { ...ok, recipients: many(11) }, 'recipients'],
    ['bad recipient address', { ...ok, recipients: [{ address: 'not-an-address' }] }, 'recipients'],
    [
      'recipient address with CRLF',
      { ...ok, recipients: [{ address: 'a@b.test\r\nBcc: x@y.test' }] },
      'recipients',
    ],
    [
      'attachment without extension',
      { ...ok, attachments: [{ name: 'report', content: 'aGk=' }] },
      'attachments',
    ],
    [
      'attachment with url and content',
      { ...ok, attachments: [{ name: 'a.pdf', content: 'aGk=', url: 'https://x.test/a.pdf' }] },
      'attachments',
    ],
    ['attachment with neither', { ...ok, attachments: [{ name: 'a.pdf' }] }, 'attachments'],
    ['bad replyAddress', { ...ok, replyAddress: 'nope' }, 'replyAddress'],
  ];

  it.each(sendCases)('send: %s', async (_name, body, field) => {
    const err = (await mailroom.send(secret, body).catch((e: unknown) => e)) as MailroomError;
    expect(err.code).toBe('VALIDATION_FAILED');
    expect(err.status).toBe(400);
    expect(err.issues?.some((i) => String(i.path[0]) === field)).toBe(true);
    expect(err.message).toContain(field);
  });

  const bOk = { subject: 'S', sender: 'from@p.test', message: 'm', recipients: many(2) };
  const broadcastCases: Array<[string, Record<string, unknown>, string]> = [
    ['251 recipients', { ...bOk, recipients: many(251) }, 'recipients'],
    ['neither recipients nor sources', { ...bOk, recipients: undefined }, 'recipients'],
    [
      'bad actionOnExistingTrait',
      { ...bOk, sources: [{ config: { ref: 'g', actionOnExistingTrait: 'merge' } }] },
      'sources',
    ],
    [
      'bad actionOnExistingProfile',
      { ...bOk, sources: [{ config: { ref: 'g', actionOnExistingProfile: 'replace' } }] },
      'sources',
    ],
    [
      'csv source without label',
      { ...bOk, sources: [{ type: 'CSV', config: { url: 'https://x.test/a.csv' } }] },
      'sources',
    ],
    ['bad scheduleFor', { ...bOk, options: { scheduleFor: 'next tuesday' } }, 'options'],
    ['storeContent not boolean', { ...bOk, options: { storeContent: 'yes' } }, 'options'],
    ['later batch over 250', { broadcastRef: 'bc_x', recipients: many(251) }, 'recipients'],
    ['later batch with nothing', { broadcastRef: 'bc_x' }, 'recipients'],
  ];

  it.each(broadcastCases)('broadcast: %s', async (_name, body, field) => {
    const err = (await mailroom.broadcast(secret, body).catch((e: unknown) => e)) as MailroomError;
    expect(err.code).toBe('VALIDATION_FAILED');
    expect(err.issues?.some((i) => String(i.path[0]) === field)).toBe(true);
  });

  it('leaves no mailing, delivery or profile behind after all the refusals above', async () => {
    expect(await mailroom.store.listMailings(projectId, 'broadcast', { limit: 10 })).toHaveLength(0);
    expect(await mailroom.store.listMailings(projectId, 'message', { limit: 10 })).toHaveLength(0);
    expect(await mailroom.store.getProfile(projectId, 'r0@x.test')).toBeUndefined();
  });

  it('never crashes on hostile JSON values', async () => {
    for (const body of [
      null,
      42,
      'str',
      [],
      [ok],
      { __proto__: { subject: 'x' } },
      { ...ok, recipients: {} },
    ]) {
      const err = (await mailroom.send(secret, body).catch((e: unknown) => e)) as MailroomError;
      expect(err.name).toBe('MailroomError');
      expect(err.code).toBe('VALIDATION_FAILED');
    }
  });

  it('refuses a Liquid syntax error in the message at accept time', async () => {
    const err = (await mailroom
      .send(secret, { ...ok, message: 'Hi {{ name ' })
      .catch((e: unknown) => e)) as MailroomError;
    expect(err.code).toBe('TEMPLATE_INVALID');
  });

  it('an unknown audience group is a 404 that says how to create it', async () => {
    const message = { ...ok, options: { acquiringAudience: 'newsletter' } };
    const broadcast = { ...ok, recipients: undefined, sources: [{ config: { ref: 'newsletter' } }] };
    for (const call of [() => mailroom.send(secret, message), () => mailroom.broadcast(secret, broadcast)]) {
      const err = (await call().catch((e: unknown) => e)) as MailroomError;
      expect(err.code).toBe('NOT_FOUND');
      expect(err.status).toBe(404);
      expect(err.message).toContain('Audience group newsletter not found');
      expect(err.message).toContain(`mailroom audience create --project ${projectId} --ref newsletter`);
      expect(err.message).toContain("admin.createAudienceGroup(projectId, { ref: 'newsletter' })");
    }
  });
});
