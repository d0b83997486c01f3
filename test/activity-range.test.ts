import { createMailroom, manualClock } from '@mailroom/core';
import { memoryStore, memoryTransport } from '@mailroom/memory';
import { describe, expect, it } from 'vitest';

describe("a mailing's activity chart", () => {
  it('charts a broadcast made this very millisecond (the dashboard asked it for a 400 before); a `from` given after `to` is still refused', async () => {
    const clock = manualClock(new Date('2031-03-30T00:00:00.000Z'));
    const mailroom = createMailroom({ store: memoryStore(), transport: memoryTransport(), clock });
    try {
      const { project, secret } = await mailroom.admin.createProject({ name: 'Acme' });
      await mailroom.admin.addSender(project.id, { address: 'news@acme.test' });
      const { ref } = await mailroom.broadcast(secret, {
        subject: 'Now',
        sender: 'news@acme.test',
        message: 'Hi',
        recipients: ['ann@example.test'],
      });
      const chart = await mailroom.activity(secret, { mailingRef: ref });
      expect(chart.to.getTime()).toBe(clock.now().getTime());
      expect(chart.from.getTime()).toBeLessThan(chart.to.getTime());
      await expect(
        mailroom.activity(secret, { mailingRef: ref, from: new Date('2031-03-31T00:00:00.000Z') }),
      ).rejects.toMatchObject({ code: 'VALIDATION_FAILED' });
    } finally {
      await mailroom.close();
    }
  });
});
