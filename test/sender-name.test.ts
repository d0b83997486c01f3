import { createMailroom } from '@mailroom/core';
import { memoryStore, memoryTransport } from '@mailroom/memory';
import { describe, expect, it } from 'vitest';

/**
 * The From display name (spec, Sender.name: "when absent, the username part of address is used"), with
 * our one extension, recorded in docs/design-notes.md: a name registered with the identity comes before
 * the username part. An identity registered without a name behaves as the spec says.
 */
describe('the sender display name', () => {
  it("is the request's name, else the identity's registered name, else the address's username part", async () => {
    const transport = memoryTransport();
    const mailroom = createMailroom({ store: memoryStore(), transport });
    const { project, secret } = await mailroom.admin.createProject({ name: 'Acme' });
    await mailroom.admin.addSender(project.id, { address: 'news@acme.test', name: 'Acme News' });
    await mailroom.admin.addSender(project.id, { address: 'billing@acme.test' });
    const send = (sender: unknown, to: string) =>
      mailroom.send(secret, { subject: 'S', sender, message: 'm', recipients: to });
    await send({ address: 'news@acme.test', name: 'Ann from Acme' }, 'a@x.test');
    await send('Ann from Acme <news@acme.test>', 'b@x.test');
    await send('news@acme.test', 'c@x.test');
    await send({ address: 'news@acme.test' }, 'd@x.test');
    await send('billing@acme.test', 'e@x.test');
    await send({ address: 'billing@acme.test', name: null }, 'f@x.test');
    await mailroom.worker.drain();
    const name = (to: string) => transport.lastMessageTo(to)?.from.name;
    expect(name('a@x.test')).toBe('Ann from Acme');
    expect(name('b@x.test')).toBe('Ann from Acme');
    expect(name('c@x.test')).toBe('Acme News');
    expect(name('d@x.test')).toBe('Acme News');
    expect(name('e@x.test')).toBe('billing');
    expect(name('f@x.test')).toBe('billing');
    await mailroom.close();
  });
});
