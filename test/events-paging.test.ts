import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { createMailroom, type EventView } from '@mailroom/core';
import { createHandler } from '@mailroom/http';
import { memoryStore, memoryTransport } from '@mailroom/memory';
import { describe, expect, it } from 'vitest';

/**
 * Events page the way the other listings of each layer do (issue 29): the engine answers `{ items, next }`
 * like `listMailings` and `searchDeliveries`; HTTP answers `data: { events, next }`, named like
 * `data: { webhooks }` of `GET /webhooks`. The cursor is the same event id in both, and the README shows
 * both shapes as they are.
 */
const README = readFileSync(fileURLToPath(new URL('../README.md', import.meta.url)), 'utf8');

describe('paging events, embedded and over HTTP', () => {
  it('both layers page the same events with the same cursor, in the shapes the README shows', async () => {
    const mailroom = createMailroom({ store: memoryStore(), transport: memoryTransport() });
    const { project, secret } = await mailroom.admin.createProject({ name: 'Acme' });
    await mailroom.admin.addSender(project.id, { address: 'news@acme.test' });
    await mailroom.broadcast(secret, {
      subject: 'Hi',
      sender: 'news@acme.test',
      message: 'Hello',
      recipients: ['a@x.test', 'b@x.test', 'c@x.test', 'd@x.test', 'e@x.test'],
    });
    await mailroom.worker.drain();

    // Engine: { items, next }, `next` passed back as `after`.
    const viaEngine: EventView[] = [];
    let page = await mailroom.listEvents(secret, { types: ['email.sent'], limit: 2 });
    for (;;) {
      expect(Object.keys(page).sort()).toEqual(['items', 'next']);
      viaEngine.push(...page.items);
      if (!page.next) break;
      page = await mailroom.listEvents(secret, { types: ['email.sent'], limit: 2, after: page.next });
    }
    expect(viaEngine).toHaveLength(5);

    // HTTP: data.events and data.next.
    const handler = createHandler(mailroom);
    const get = async (query: string) => {
      const res = await handler({
        method: 'GET',
        path: '/events',
        query,
        headers: { authorization: `Bearer ${secret}` },
        body: undefined,
      });
      expect(res.status).toBe(200);
      return JSON.parse(res.body) as { data: { events: EventView[]; next: string | null } };
    };
    const viaHttp: EventView[] = [];
    let body = await get('types=email.sent&limit=2');
    const first = body;
    for (;;) {
      expect(Object.keys(body.data).sort()).toEqual(['events', 'next']);
      viaHttp.push(...body.data.events);
      if (!body.data.next) break;
      body = await get(`types=email.sent&limit=2&after=${body.data.next}`);
    }
    expect(viaHttp.map((e) => e.id)).toEqual(viaEngine.map((e) => e.id));

    // The README's answer of GET /events has the real answer's shape.
    const line = /^# (\{"message":"Events".*\})$/m.exec(README)?.[1];
    expect(line, 'README: a "# {"message":"Events",...}" line under the GET /events example').toBeDefined();
    const documented = JSON.parse(line ?? '{}') as typeof first & Record<string, unknown>;
    expect(Object.keys(documented).sort()).toEqual(Object.keys(first).sort());
    expect(Object.keys(documented.data).sort()).toEqual(['events', 'next']);
    const [event] = first.data.events;
    expect(Object.keys(documented.data.events[0] ?? {}).sort()).toEqual(Object.keys(event ?? {}).sort());
    // And the engine's loop, as written there.
    expect(README).toContain('page.items');
    expect(README).toContain('after: page.next');
    await mailroom.close();
  });
});
