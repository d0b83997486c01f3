import { createMailroomClient } from '@mailroom/client';
import { createMailroom, type Mailroom, type ManualClock, manualClock, workflow } from '@mailroom/core';
import { memoryStore, memoryTransport } from '@mailroom/memory';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { callApi, type Listening, listenMailroom } from './support/http-harness.js';

/**
 * Automations over HTTP (issue 39) on 127.0.0.1 through Express: `POST /events/track`, the workflow
 * routes, their 400s naming the path in the definition, and the run counts per step.
 */

interface Envelope {
  statusCode: number;
  message: string;
  data: Record<string, unknown>;
  issues?: Array<{ path: Array<string | number>; message: string }>;
}

describe('automations over HTTP', () => {
  let clock: ManualClock;
  let transport: ReturnType<typeof memoryTransport>;
  let mailroom: Mailroom;
  let server: Listening;
  let secret: string;
  let otherSecret: string;
  const api = (method: string, path: string, body?: unknown, key: string = secret) =>
    callApi<Envelope>(server.url, method, path, body, key);

  const definition = workflow('Welcome')
    .on('signup')
    .send({ id: 'hello', template: 'welcome', sender: 'team@acme.test' })
    .wait('1d', { id: 'later' })
    .send({ id: 'tips', template: 'welcome', sender: 'team@acme.test' })
    .build();

  beforeAll(async () => {
    clock = manualClock(new Date('2031-02-01T09:00:00.000Z'));
    transport = memoryTransport();
    mailroom = createMailroom({ store: memoryStore(), transport, clock });
    const created = await mailroom.admin.createProject({ name: 'Acme' });
    secret = created.secret;
    otherSecret = (await mailroom.admin.createProject({ name: 'Other' })).secret;
    await mailroom.admin.addSender(created.project.id, { address: 'team@acme.test' });
    await mailroom.admin.createTemplate(created.project.id, {
      ref: 'welcome',
      format: 'text',
      subject: 'Welcome {{ event.plan }}',
      source: 'Hi',
    });
    server = await listenMailroom('express', mailroom);
  });
  afterAll(async () => {
    await server?.close();
    await mailroom?.close();
  });

  it('refuses bad definitions with 400 and issues naming the path', async () => {
    const bad = await api('POST', '/automations', {
      ...definition,
      steps: [
        ...(definition.steps as object[]),
        { type: 'send', template: 'missing', sender: 'team@acme.test' },
      ],
    });
    expect(bad.status).toBe(400);
    expect(bad.json.issues).toEqual([
      expect.objectContaining({ path: ['steps', 3, 'template'], message: 'No template missing' }),
    ]);
    const cycle = await api('POST', '/automations', {
      ...definition,
      steps: [
        { id: 'a', type: 'wait', duration: '1h', next: 'b' },
        { id: 'b', type: 'wait', duration: '1h', next: 'a' },
      ],
    });
    expect(cycle.status).toBe(400);
    expect(cycle.json.message).toContain('steps[1].next');
    const long = await api('POST', '/automations', {
      ...definition,
      steps: [{ type: 'wait', duration: '400d' }],
    });
    expect(long.json.issues?.[0]?.path).toEqual(['steps', 0, 'duration']);
    const huge = await api('POST', '/automations', {
      ...definition,
      steps: Array.from({ length: 10_000 }, () => ({ type: 'wait', duration: '1h' })),
    });
    expect([huge.status, huge.json.issues?.[0]?.path]).toEqual([400, ['steps']]);
    const track = await api('POST', '/events/track', { event: 'bad name', contact: 'not-an-address' });
    expect(track.status).toBe(400);
    expect(track.json.issues?.map((i) => i.path[0]).sort()).toEqual(['contact', 'event']);
    expect((await api('GET', '/automations')).json.data.workflows).toEqual([]);
  });

  it('creates a workflow, tracks events (a repeat id is a no-op), shows runs per step, pauses, resumes and deletes', async () => {
    const created = await api('POST', '/automations', definition);
    expect(created.status).toBe(200);
    const id = (created.json.data.workflow as { id: string }).id;
    const first = await api('POST', '/events/track', {
      event: 'signup',
      contact: 'ann@example.test',
      id: 'signup-1',
      properties: { plan: 'pro' },
    });
    expect(first.json.data).toMatchObject({ id: 'signup-1', recorded: true, started: [{ workflow: id }] });
    const again = await api('POST', '/events/track', {
      event: 'signup',
      contact: 'ann@example.test',
      id: 'signup-1',
    });
    expect(again.json).toMatchObject({
      message: 'Event already tracked',
      data: { recorded: false, started: [] },
    });
    await mailroom.automations.runDue();
    await mailroom.worker.drain();
    expect(transport.messagesTo('ann@example.test').map((m) => m.subject)).toEqual(['Welcome pro']);
    const one = await api('GET', `/automations/${id}`);
    expect(one.json.data.workflow).toMatchObject({ version: 1, runs: { atStep: { later: 1 }, active: 1 } });
    const runs = await api('GET', `/automations/${id}/runs?status=active&limit=10`);
    expect(runs.json.data).toMatchObject({
      runs: [{ contact: 'ann@example.test', step: 'later' }],
      nextCursor: null,
    });
    expect((await api('GET', `/automations/${id}/runs?limit=0`)).status).toBe(400);
    // Another project's key: the workflow does not exist.
    expect((await api('GET', `/automations/${id}`, undefined, otherSecret)).status).toBe(404);

    expect((await api('POST', `/automations/${id}/pause`)).json.data.workflow).toMatchObject({
      status: 'paused',
    });
    clock.advance(2 * 86_400_000);
    await mailroom.automations.runDue();
    expect((await api('POST', `/automations/${id}/resume`)).json.data.workflow).toMatchObject({
      status: 'active',
    });
    await mailroom.automations.runDue();
    await mailroom.worker.drain();
    expect(transport.messagesTo('ann@example.test')).toHaveLength(2);

    const updated = await api('PUT', `/automations/${id}`, { ...definition, name: 'Welcome v2' });
    expect(updated.json.data.workflow).toMatchObject({ version: 2, name: 'Welcome v2' });
    expect((await api('DELETE', `/automations/${id}`)).status).toBe(200);
    expect((await api('GET', `/automations/${id}`)).status).toBe(404);
  });

  it('counts the runs entered, waiting, passed and exited at each step (GET /automations/{id}/stats, the client)', async () => {
    const branching = {
      name: 'Trial',
      trigger: { event: 'trial' },
      exitOn: ['paid'],
      steps: [
        {
          id: 'check',
          type: 'condition',
          if: { property: 'plan', op: 'equals', value: 'pro' },
          onTrue: 'hello',
          onFalse: 'later',
        },
        { id: 'hello', type: 'send', template: 'welcome', sender: 'team@acme.test' },
        { id: 'later', type: 'wait', duration: '1d' },
        { id: 'tips', type: 'send', template: 'welcome', sender: 'team@acme.test' },
      ],
    };
    const id = ((await api('POST', '/automations', branching)).json.data.workflow as { id: string }).id;
    const stats = async () => {
      const answer = await api('GET', `/automations/${id}/stats`);
      expect(answer.status).toBe(200);
      const data = answer.json.data.stats as { workflow: string; steps: Array<Record<string, unknown>> };
      expect(data.workflow).toBe(id);
      return Object.fromEntries(
        data.steps.map((s) => [s.id, [s.type, s.entered, s.waiting, s.passed, s.exited].join(' ')]),
      );
    };
    for (const [contact, plan] of [
      ['pro@example.test', 'pro'],
      ['free@example.test', 'free'],
      ['payer@example.test', 'free'],
    ]) {
      await api('POST', '/events/track', {
        event: 'trial',
        contact,
        id: `trial-${contact}`,
        properties: { plan },
      });
    }
    expect(await stats()).toEqual({
      check: 'condition 3 3 0 0',
      hello: 'send 0 0 0 0',
      later: 'wait 0 0 0 0',
      tips: 'send 0 0 0 0',
    });
    // The condition, the pro's send and the three waits: moves of steps walked in one claim count too.
    await mailroom.automations.runDue();
    expect(await stats()).toEqual({
      check: 'condition 3 0 3 0',
      hello: 'send 1 0 1 0',
      later: 'wait 3 3 0 0',
      tips: 'send 0 0 0 0',
    });
    // An exit event ends one run where it waits.
    await api('POST', '/events/track', { event: 'paid', contact: 'payer@example.test', id: 'paid-1' });
    await mailroom.automations.runDue();
    clock.advance(2 * 86_400_000);
    await mailroom.automations.runDue();
    const done = {
      check: 'condition 3 0 3 0',
      hello: 'send 1 0 1 0',
      later: 'wait 3 0 2 1',
      tips: 'send 2 0 2 0',
    };
    expect(await stats()).toEqual(done);
    // The typed client, and another project's key (404).
    const client = createMailroomClient({ url: server.url, key: secret });
    const { stats: typed } = await client.automations.stats(id);
    expect(typed.steps.find((s) => s.id === 'later')).toEqual({
      id: 'later',
      type: 'wait',
      entered: 3,
      waiting: 0,
      passed: 2,
      exited: 1,
    });
    expect((await api('GET', `/automations/${id}/stats`, undefined, otherSecret)).status).toBe(404);
    // A new version without `hello`: its counts stay, listed after the current steps (type null).
    await api('PUT', `/automations/${id}`, {
      ...branching,
      steps: branching.steps
        .filter((s) => s.id !== 'hello')
        .map((s) => (s.id === 'check' ? { ...s, onTrue: 'tips' } : s)),
    });
    expect(Object.keys(await stats())).toEqual(['check', 'later', 'tips', 'hello']);
    expect((await stats()).hello).toBe(' 1 0 1 0');
  });

  it('the typed client tracks events and manages workflows', async () => {
    const client = createMailroomClient({ url: server.url, key: secret });
    const { workflow: created } = await client.automations.create({ ...definition, name: 'Client' });
    const tracked = await client.automations.track({
      event: 'signup',
      contact: 'cy@example.test',
      id: 'c-1',
    });
    expect(tracked).toMatchObject({ recorded: true, started: [{ workflow: created.id }] });
    expect(
      (await client.automations.track({ event: 'signup', contact: 'cy@example.test', id: 'c-1' })).recorded,
    ).toBe(false);
    expect((await client.automations.runs(created.id, { status: 'active' })).runs).toHaveLength(1);
    expect((await client.automations.pause(created.id)).workflow.status).toBe('paused');
    expect((await client.automations.list()).workflows.map((w) => w.id)).toContain(created.id);
    await client.automations.remove(created.id);
    await expect(client.automations.get(created.id)).rejects.toMatchObject({ status: 404 });
  });
});
