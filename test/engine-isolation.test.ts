import { createMailroom, type Mailroom } from '@mailroom/core';
import { type MemoryTransport, memoryTransport } from '@mailroom/memory';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { storeCases } from './support/stores.js';

describe.each(storeCases())('tenant isolation on $name', ({ make }) => {
  let mailroom: Mailroom;
  let transport: MemoryTransport;
  let a: { id: string; secret: string };
  let bRef: string;

  beforeEach(async () => {
    transport = memoryTransport();
    mailroom = createMailroom({ store: await make(), transport });
    const pa = await mailroom.admin.createProject({ name: 'A' });
    const pb = await mailroom.admin.createProject({ name: 'B' });
    a = { id: pa.project.id, secret: pa.secret };
    await mailroom.admin.addSender(pa.project.id, { address: 'a@a.test' });
    await mailroom.admin.addSender(pb.project.id, { address: 'b@b.test' });
    await mailroom.admin.createTemplate(pb.project.id, { ref: 'b-only', format: 'text', source: 'B' });
    await mailroom.admin.createAudienceGroup(pb.project.id, { ref: 'b-group' });
    bRef = (
      await mailroom.broadcast(pb.secret, {
        subject: 'B',
        sender: 'b@b.test',
        message: 'B',
        recipients: ['x@example.test'],
      })
    ).ref;
    await mailroom.worker.drain();
    transport.clear();
  });

  afterEach(async () => {
    await mailroom.close();
  });

  const base = { subject: 'S', sender: 'a@a.test', message: 'm', recipients: ['r@example.test'] };

  it("answers not found for another project's broadcast, template and audience group", async () => {
    await expect(
      mailroom.broadcast(a.secret, { broadcastRef: bRef, recipients: ['r@example.test'] }),
    ).rejects.toMatchObject({
      code: 'NOT_FOUND',
      status: 404,
    });
    await expect(mailroom.getMailing(a.secret, bRef)).rejects.toMatchObject({ code: 'NOT_FOUND' });
    await expect(
      mailroom.send(a.secret, { ...base, message: undefined, template: { ref: 'b-only' } }),
    ).rejects.toMatchObject({ code: 'NOT_FOUND' });
    await expect(
      mailroom.broadcast(a.secret, { ...base, options: { acquiringAudience: 'b-group' } }),
    ).rejects.toMatchObject({ code: 'NOT_FOUND' });
    await expect(
      mailroom.broadcast(a.secret, { ...base, recipients: undefined, audience: ['b-group'] }),
    ).rejects.toMatchObject({ code: 'NOT_FOUND' });
    // The unknown-ref answer is the same as for a ref that never existed.
    const message = (ref: string) =>
      mailroom.getMailing(a.secret, ref).then(
        () => 'found',
        (e: Error) => e.message.replace(ref, 'REF'),
      );
    expect(await message(bRef)).toBe(await message('bc_doesnotexist'));
  });

  it("refuses another project's sender identity", async () => {
    await expect(mailroom.send(a.secret, { ...base, sender: 'b@b.test' })).rejects.toMatchObject({
      code: 'SENDER_NOT_ALLOWED',
      status: 403,
    });
  });

  it('sends nothing and writes nothing for any refused request', async () => {
    await Promise.allSettled([
      mailroom.broadcast(a.secret, { broadcastRef: bRef, recipients: ['r@example.test'] }),
      mailroom.send(a.secret, { ...base, sender: 'b@b.test' }),
      mailroom.send(a.secret, { ...base, template: { ref: 'b-only' }, message: undefined }),
    ]);
    await mailroom.worker.drain();
    expect(transport.outbox).toHaveLength(0);
    expect(await mailroom.store.listMailings(a.id, 'broadcast', { limit: 10 })).toHaveLength(0);
    expect(await mailroom.store.listMailings(a.id, 'message', { limit: 10 })).toHaveLength(0);
    expect(await mailroom.store.getProfile(a.id, 'r@example.test')).toBeUndefined();
  });

  it('gives one identical error for a missing, malformed and unknown secret', async () => {
    const errors = await Promise.all(
      [undefined, '', 'Bearer nope', 'sk_live_', `sk_live_${'x'.repeat(43)}`].map((s) =>
        mailroom
          .send(s as string, base)
          .catch((e: { code: string; message: string }) => `${e.code}:${e.message}`),
      ),
    );
    expect(new Set(errors).size).toBe(1);
    expect(errors[0]).toMatch(/^UNAUTHORIZED:/);
  });
});
