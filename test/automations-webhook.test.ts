import { createMailroom, type Mailroom, workflow } from '@mailroom/core';
import { memoryStore, memoryTransport } from '@mailroom/memory';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startWebhookReceiver, type WebhookReceiver } from './support/webhook-receiver.js';

/**
 * Automations (issue 39): a `webhook` step calls the app through one of the project's webhook endpoints,
 * signed with its secret (Standard Webhooks, verified by the receiver), once per run.
 */
describe('the webhook step of a workflow', () => {
  let receiver: WebhookReceiver;
  let mailroom: Mailroom;
  let secret: string;

  beforeAll(async () => {
    receiver = await startWebhookReceiver();
    mailroom = createMailroom({
      store: memoryStore(),
      transport: memoryTransport(),
      fetch: { allowHosts: [receiver.host] },
      automations: { pollMs: 20 },
      webhooks: { pollMs: 20 },
    });
    secret = (await mailroom.admin.createProject({ name: 'Acme' })).secret;
  });
  afterAll(async () => {
    await mailroom?.close();
    await receiver?.close();
  });

  it('POSTs automation.webhook, signed, to the endpoint the step names (whatever it subscribes to), once per run', async () => {
    const added = await mailroom.webhooks.add(secret, { url: receiver.url, events: ['email.sent'] });
    receiver.secret = added.secret;
    await expect(
      mailroom.automations.create(secret, workflow('Bad').on('x').webhook({ endpoint: 'wh_nope' }).build()),
    ).rejects.toMatchObject({
      issues: [{ path: ['steps', 0, 'endpoint'], message: 'No webhook endpoint wh_nope', code: 'custom' }],
    });
    const created = await mailroom.automations.create(
      secret,
      workflow('Call')
        .on('signup')
        .webhook({ id: 'crm', endpoint: added.endpoint.id, payload: { list: 'trial' } })
        .build(),
    );
    const { started } = await mailroom.track(secret, {
      event: 'signup',
      contact: 'ann@example.test',
      id: 's-1',
    });
    mailroom.worker.start();
    await receiver.waitFor((r) => r.some((x) => x.payload.type === 'automation.webhook'), 10_000);
    await mailroom.worker.stop();
    const calls = receiver.received.filter((r) => r.payload.type === 'automation.webhook');
    expect(calls).toHaveLength(1);
    expect(calls[0]?.verified).toBe(true);
    expect(calls[0]?.payload.data).toMatchObject({
      address: 'ann@example.test',
      automation: {
        workflow_id: created.id,
        run_id: started[0]?.run,
        step: 'crm',
        payload: { list: 'trial' },
        trigger_event_id: 's-1',
      },
    });
    // Only the call: the endpoint subscribes to email.sent, not to the run's own events.
    expect(receiver.received.map((r) => r.payload.type)).toEqual(['automation.webhook']);
  });
});
