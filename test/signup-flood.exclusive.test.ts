import { mkdtempSync } from 'node:fs';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { createMailroom, type Mailroom } from '@mailroom/core';
import { mailroomRouter } from '@mailroom/http/express';
import { smtpTransport } from '@mailroom/smtp';
import { sqlStore } from '@mailroom/sql';
import express from 'express';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type SmtpSink, startSmtpSink } from './support/smtp-sink.js';

/**
 * The public signup endpoint under a flood (issue 38), on SQLite over HTTP: 5,000 signups from one client
 * address in well under a minute are refused past its limit (429 with `Retry-After`), while another
 * client's signups keep their speed; one address signed up from many clients is limited too, with the
 * same answer whether the address is known or not. Timing-sensitive: run under the shared lock.
 */

const PREFIX = '/api';
const SENDER = 'news@acme.test';
const FLOOD = 5000;

/** The flooding client, in a thread of its own so that its requests do not queue on the server's loop. */
const FLOOD_CLIENT = `
const { parentPort, workerData } = require('node:worker_threads');
const { url, count, concurrency } = workerData;
let next = 0;
const statuses = {};
let retryAfter = 0;
async function lane() {
  while (next < count) {
    const i = next++;
    const res = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-forwarded-for': '192.0.2.66' },
      body: JSON.stringify({ email: 'flood' + i + '@example.test' }),
    });
    await res.arrayBuffer();
    statuses[res.status] = (statuses[res.status] ?? 0) + 1;
    if (res.status === 429 && res.headers.get('retry-after')) retryAfter++;
  }
}
const started = Date.now();
Promise.all(Array.from({ length: concurrency }, lane)).then(() =>
  parentPort.postMessage({ statuses, retryAfter, ms: Date.now() - started }),
);
`;

describe('the signup endpoint under a flood', () => {
  let sink: SmtpSink;
  let mailroom: Mailroom;
  let server: Server;
  let port = 0;
  let formRef: string;
  let projectId: string;
  let secret: string;

  const url = () => `http://127.0.0.1:${port}${PREFIX}/subscribe/${formRef}`;

  async function signup(email: string, ip: string): Promise<{ status: number; ms: number; body: string }> {
    const started = performance.now();
    const res = await fetch(url(), {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-forwarded-for': ip },
      body: JSON.stringify({ email }),
    });
    const body = await res.text();
    return { status: res.status, ms: performance.now() - started, body };
  }

  const median = (values: number[]) => {
    const sorted = [...values].sort((a, b) => a - b);
    return sorted[Math.floor(sorted.length / 2)] as number;
  };

  beforeAll(async () => {
    sink = await startSmtpSink();
    const dbPath = join(mkdtempSync(join(tmpdir(), 'mailroom-signup-flood-')), 'mailroom.db');
    mailroom = createMailroom({
      store: sqlStore({ url: dbPath }),
      transport: smtpTransport({ host: sink.host, port: sink.port }),
      signup: { baseUrl: () => `http://127.0.0.1:${port}${PREFIX}` },
    });
    const app = express();
    // The default limits: 10 signups a minute per client address, 3 then one per 10 minutes per address.
    app.use(PREFIX, mailroomRouter(mailroom, { trustProxy: ['127.0.0.1'] }));
    server = await new Promise<Server>((resolve, reject) => {
      const s = app.listen(0, '127.0.0.1', (error?: Error) => (error ? reject(error) : resolve(s)));
    });
    port = (server.address() as AddressInfo).port;
    const created = await mailroom.admin.createProject({ name: 'Acme' });
    const project = created.project;
    secret = created.secret;
    projectId = project.id;
    await mailroom.admin.addSender(project.id, { address: SENDER });
    await mailroom.topics.create(secret, { key: 'news', name: 'News', doubleOptIn: true });
    const form = await mailroom.forms.create(secret, {
      name: 'Footer',
      topic: 'news',
      consentText: 'Send me news',
      sender: SENDER,
    });
    formRef = form.ref;
  });

  afterAll(async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
    await mailroom.close();
    await sink.close();
  });

  it('5,000 signups from one client in a minute are limited; another client is not slowed', async () => {
    // Another client's signups alone, then during the flood (each from its own address: 10 each).
    const alone: number[] = [];
    for (let i = 0; i < 10; i++) {
      const answer = await signup(`alone${i}@example.test`, '198.51.100.10');
      expect(answer.status).toBe(200);
      alone.push(answer.ms);
    }
    const worker = new Worker(FLOOD_CLIENT, {
      eval: true,
      workerData: { url: url(), count: FLOOD, concurrency: 32 },
    });
    const flooded = new Promise<{ statuses: Record<string, number>; retryAfter: number; ms: number }>(
      (resolve, reject) => {
        worker.once('message', resolve);
        worker.once('error', reject);
      },
    );
    const during: number[] = [];
    let floodOver = false;
    void flooded.then(() => {
      floodOver = true;
    });
    // Wait for the flood to be under way: its first refusals.
    await new Promise((resolve) => setTimeout(resolve, 50));
    for (let i = 0; i < 10 && !floodOver; i++) {
      const answer = await signup(`during${i}@example.test`, '198.51.100.11');
      expect(answer.status, answer.body).toBe(200);
      during.push(answer.ms);
    }
    const result = await flooded;
    await worker.terminate();
    const accepted = result.statuses['200'] ?? 0;
    const refused = result.statuses['429'] ?? 0;
    console.log(
      `flood: ${FLOOD} signups from one client in ${result.ms} ms: ${accepted} accepted, ${refused} refused (429); ` +
        `another client: median ${median(alone).toFixed(1)} ms alone, ${median(during).toFixed(1)} ms during ` +
        `(${during.length} signups during the flood)`,
    );
    expect(result.ms).toBeLessThan(60_000);
    expect(accepted + refused).toBe(FLOOD);
    // The burst of 10, and at most one more per 6 s of flood.
    expect(accepted).toBeLessThanOrEqual(10 + Math.ceil(result.ms / 6000));
    expect(result.retryAfter).toBe(refused);
    expect(during.length).toBeGreaterThanOrEqual(3);
    // Not slowed: the other client's median stays within 100 ms of its median alone.
    expect(median(during)).toBeLessThan(median(alone) + 100);
    // The flood wrote nothing past its limit: only the accepted signups have a profile.
    await mailroom.signups.settled();
    const addresses = Array.from({ length: FLOOD }, (_, i) => `flood${i}@example.test`);
    expect(await mailroom.store.findProfiles(projectId, addresses)).toHaveLength(accepted);
  }, 120_000);

  it('one address from many clients is limited too, the same whether it is known or not', async () => {
    const times: Record<string, number[]> = {};
    const statuses = async (email: string, prefix: string) => {
      const out: Array<{ status: number; body: string }> = [];
      for (let i = 0; i < 5; i++) {
        const { status, body, ms } = await signup(email, `${prefix}.${i}`);
        await mailroom.signups.settled();
        if (status === 200) times[email] = [...(times[email] ?? []), ms];
        out.push({ status, body });
      }
      return out;
    };
    // Known: a contact of the project, subscribed to the topic through the API.
    await mailroom.topics.setContactTopics(secret, 'known@example.test', { news: 'subscribed' });
    const known = await statuses('known@example.test', '203.0.113');
    const unknown = await statuses('never-seen@example.test', '198.18.0');
    expect(known.map((a) => a.status)).toEqual([200, 200, 200, 429, 429]);
    expect(unknown).toEqual(known);
    // The answer comes before the work: a known address's and a new one's take the same time.
    const known200 = median(times['known@example.test'] ?? []);
    const unknown200 = median(times['never-seen@example.test'] ?? []);
    console.log(
      `answer time: known ${known200.toFixed(1)} ms, unknown ${unknown200.toFixed(1)} ms (medians of 3)`,
    );
  });
});
