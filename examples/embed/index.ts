/**
 * Mailroom embedded in a script: a project, a sender, an MJML template, one message and a broadcast of
 * 1,000 personalized recipients in four batches, delivered through the memory adapters.
 * Run: npx pnpm@10 --filter @mailroom/example-embed start
 */
import { createMailroom } from '@mailroom/core';
import { memoryStore, memoryTransport } from '@mailroom/memory';

const transport = memoryTransport();
const mailroom = createMailroom({ store: memoryStore(), transport });

const { project, secret } = await mailroom.admin.createProject({ name: 'Acme' });
await mailroom.admin.addSender(project.id, { address: 'news@acme.test', name: 'Acme News' });
await mailroom.admin.createTemplate(project.id, {
  ref: 'monthly',
  format: 'mjml',
  source: `<mjml><mj-body><mj-section><mj-column>
  <mj-text font-size="18px">Hello {{ recipient.firstName | default: "friend" }},</mj-text>
  <mj-text>Your plan: {{ plan }}. Points this month: {{ points }}.</mj-text>
  <mj-button href="https://acme.test/account">Your account</mj-button>
</mj-column></mj-section></mj-body></mjml>`,
});

const started = performance.now();
const message = await mailroom.send(secret, {
  subject: 'Welcome, {{ recipient.firstName }}',
  sender: 'news@acme.test',
  message: '<p>Thanks for joining, {{ recipient.firstName }}!</p>',
  recipients: [{ address: 'ada@example.test', name: 'Ada Lovelace' }],
});

const people = Array.from({ length: 1000 }, (_, i) => ({
  address: `member${i}@example.test`,
  name: `Member${i} Example`,
  variables: { points: i * 10, ...(i % 3 === 0 ? { plan: 'Pro' } : {}) },
}));
const first = await mailroom.broadcast(secret, {
  subject: '{{ month }} at Acme, {{ profile.firstName }}',
  sender: { address: 'news@acme.test' },
  template: { ref: 'monthly', variables: { month: 'November', plan: 'Free' } },
  recipients: people.slice(0, 250),
});
for (let b = 1; b < 4; b++) {
  await mailroom.broadcast(secret, {
    broadcastRef: first.ref,
    recipients: people.slice(b * 250, (b + 1) * 250),
  });
}
await mailroom.worker.drain();

const broadcast = await mailroom.getMailing(secret, first.ref);
const sample = transport.lastMessageTo('member3@example.test');
console.log(`message ${message.ref}: ${(await mailroom.getMailing(secret, message.ref)).status}`);
console.log(
  `broadcast ${broadcast.ref}: ${broadcast.status}, ${broadcast.batchCount} batches, counts`,
  broadcast.counts,
);
console.log(`outbox: ${transport.outbox.length} messages in ${Math.round(performance.now() - started)} ms`);
console.log(
  `sample to member3: "${sample?.subject}" / ${sample?.text.split('\n').find((l) => l.includes('plan'))}`,
);
await mailroom.close();
