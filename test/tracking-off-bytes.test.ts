import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { createMailroom, type MailroomOptions } from '@mailroom/core';
import { memoryStore, memoryTransport } from '@mailroom/memory';
import { describe, expect, it } from 'vitest';

/**
 * Tracking off is the engine as it was: the messages a broadcast hands to the transport are compared with
 * a fixture recorded from `main` before tracking existed (`MAILROOM_UPDATE_FIXTURE=1` rewrites it). The
 * transport's MIME is a function of that message (and its random boundaries), so equal messages mean the
 * same bytes. An engine with tracking configured whose mailing turns both off sends the same messages.
 */

const FIXTURE = fileURLToPath(new URL('./fixtures/tracking-off-messages.json', import.meta.url));
const SENDER = 'news@acme.test';
const HTML = `<html><body><h1>Hello {{ profile.firstName }}</h1>
<p><a href="https://shop.example.test/sale?src=mail&amp;x=1">Sale</a> and
<a href="https://shop.example.test/p?u={{ user_id }}">your page</a>, <a href="mailto:help@acme.test">mail us</a>.</p>
{% if vip %}<p><a href="https://vip.example.test/">VIP lounge</a></p>{% endif %}
</body></html>`;

/** The messages of one broadcast to three recipients, with the per-delivery Message-ID replaced. */
async function messages(extra: Partial<MailroomOptions>, options: Record<string, unknown> = {}) {
  const transport = memoryTransport();
  const mailroom = createMailroom({ store: memoryStore(), transport, ...extra });
  const { project, secret } = await mailroom.admin.createProject({ name: 'Acme' });
  await mailroom.admin.addSender(project.id, { address: SENDER, name: 'Acme News' });
  await mailroom.broadcast(secret, {
    subject: 'News for {{ profile.firstName }}',
    preheader: 'Spring is here',
    sender: SENDER,
    message: HTML,
    recipients: [
      { address: 'ann@example.test', name: 'Ann Lee', variables: { user_id: 'a&1', vip: true } },
      { address: 'bob@example.test', name: 'Bob', variables: { user_id: 'b2' } },
      { address: 'cy@example.test', variables: { user_id: '<c3>' } },
    ],
    ...(Object.keys(options).length > 0 ? { options } : {}),
  });
  await mailroom.worker.drain();
  await mailroom.close();
  return (
    transport.outbox
      // Per-run ids replaced: the Message-ID, and the mailing's project and ref where a message names them.
      .map((m) => {
        const named = m as typeof m & { mailing?: Record<string, unknown> };
        return {
          ...m,
          messageId: '<id>',
          ...(named.mailing ? { mailing: { ...named.mailing, projectId: '<project>', ref: '<ref>' } } : {}),
        };
      })
      .sort((a, b) => (a.to.address < b.to.address ? -1 : 1))
  );
}

describe('tracking off', () => {
  it('hands the transport exactly the messages main did', async () => {
    const got = JSON.parse(JSON.stringify(await messages({})));
    if (process.env.MAILROOM_UPDATE_FIXTURE === '1')
      writeFileSync(FIXTURE, `${JSON.stringify(got, null, 2)}\n`);
    expect(got).toEqual(JSON.parse(readFileSync(FIXTURE, 'utf8')));
    expect(JSON.stringify(got)).not.toMatch(/\/t\/[co]\//);
  });

  it('is the same when the engine tracks but the mailing turns opens and clicks off', async () => {
    const tracked = { tracking: { baseUrl: 'https://mail.acme.test', opens: true, clicks: true } };
    expect(
      JSON.parse(JSON.stringify(await messages(tracked, { track: { opens: false, clicks: false } }))),
    ).toEqual(JSON.parse(readFileSync(FIXTURE, 'utf8')));
    // And with tracking on, they differ (the test can fail).
    expect(JSON.stringify(await messages(tracked))).toMatch(/https:\/\/mail\.acme\.test\/t\/c\//);
  });
});
