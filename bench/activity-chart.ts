/**
 * Issue 31: what the activity chart's two reads cost on a busy project. N events over the last 24 hours
 * (sends, with a few pauses among them), then the project's chart as the dashboard asks for it: the
 * counts per hour (`countEventSeries`) and the pause events of the period (`listEventsBetween`, which
 * reads the same range by the same index and keeps the rare types), in milliseconds, per store.
 */

import { makeProject, makeSecret } from '../packages/core/src/testing/store-fixtures.js';
import { makeEvent } from '../packages/core/src/testing/store-suite-events.js';
import { median, report } from './support/measure.js';
import { BENCH_STORES, watchHost } from './support/stores.js';

const N = Number(process.env.BENCH_EVENTS ?? 200_000);
const RUNS = Number(process.env.BENCH_RUNS ?? 5);
const ONLY = process.env.BENCH_STORES?.split(',').map((s) => s.trim()) ?? ['sqlite'];
const DAY = 86_400_000;

for (const [name, make] of BENCH_STORES) {
  if (!ONLY.includes(name)) continue;
  const host = watchHost();
  const { store, drop } = await make();
  await store.init();
  const project = makeProject();
  await store.createProject(project, makeSecret(project.id));
  const to = new Date();
  const from = new Date(to.getTime() - DAY);
  for (let off = 0; off < N; off += 2000) {
    const events = Array.from({ length: Math.min(2000, N - off) }, (_, i) => {
      const k = off + i;
      const createdAt = new Date(from.getTime() + Math.floor((k / N) * DAY));
      // One pause or resume in 10,000 events.
      const type =
        k % 10_000 === 0 ? (k % 20_000 === 0 ? 'broadcast.paused' : 'broadcast.resumed') : 'email.sent';
      return makeEvent(project.id, { type, createdAt, mailingRef: 'brd_a', address: `u${k}@example.test` });
    });
    await store.insertOutbox({ events, messages: [] });
  }
  const time = async (fn: () => Promise<unknown>) => {
    const times: number[] = [];
    for (let r = 0; r < RUNS; r++) {
      const t0 = performance.now();
      await fn();
      times.push(performance.now() - t0);
    }
    return Math.round(median(times) * 10) / 10;
  };
  const countMs = await time(() => store.countEventSeries(project.id, { from, to, bucketMs: 3_600_000 }));
  const pausesMs = await time(() =>
    store.listEventsBetween(project.id, {
      from,
      to,
      types: ['broadcast.paused', 'broadcast.resumed'],
      limit: 1000,
    }),
  );
  await drop();
  report(`activity-chart ${name}`, {
    events: N,
    runs: RUNS,
    countMs,
    pausesMs,
    ratio: Math.round((pausesMs / countMs) * 100) / 100,
    ...host(),
  });
}
