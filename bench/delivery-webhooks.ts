/**
 * Issue 15: delivery with one webhook endpoint subscribed to `email.sent`, against the same delivery
 * without it, in the same run, as users run Mailroom: `mailroom serve` on its defaults (the built CLI,
 * SQLite, fed over HTTP by `support/serve-run.ts`) delivering a corpus template to an SMTP sink in its
 * own process. With the endpoint, serve also gets `--allow-host 127.0.0.1:PORT` of a webhook receiver in
 * its own process (`support/webhook-sink.ts`: answers 204, counts distinct `webhook-id`s), and the
 * endpoint is added before serve starts (`mailroom.webhooks.add`, events `email.sent`).
 *
 * Timed from the first POST: "delivered" until the SMTP sink has every message (the mail rate, the
 * target: within 10 % of the rate without the endpoint), "all events" until the receiver also has one
 * distinct `webhook-id` per recipient (the run fails after a minute without progress). The order of the
 * two runs alternates between rounds, so a drift of the machine's load favours neither.
 *
 * Figures: messages/s, ratios per round and of the medians, CPU µs per message of serve and of the
 * receiver, load average before and after. Environment: BENCH_RECIPIENTS (100000), BENCH_RUNS (3),
 * BENCH_TEMPLATE (newsletter), BENCH_CPU_PROF (a directory: CPU profiles of serve), BENCH_WEBHOOK_BUSY_RATE
 * (serve's `--webhook-busy-rate` in the runs with the endpoint; serve's default if unset).
 *
 * BENCH_WEBHOOK_BAD=1 (issue 30): the runs with the endpoint also have four bad ones subscribed to
 * `email.sent`, in a process of their own (`test/support/bad-webhook-child.ts`): one that hangs, one that
 * answers 200 after 9 s, one whose 200 carries a 300 MB body, one that redirects to a loopback port it
 * may not reach. The healthy receiver must still get every event; the figures add how long after the
 * last mail it had them all, and what each bad endpoint got.
 */
import { loadavg } from 'node:os';
import {
  type BadEndpointsProcess,
  type BadEndpointsStats,
  startBadEndpointsProcess,
} from '../test/support/bad-webhook-process.js';
import { median, report } from './support/measure.js';
import { type StackResult, serveRun } from './support/serve-run.js';
import { type SinkProcess, startSinkProcess } from './support/sink-process.js';
import { corpusTemplate } from './templates/index.js';

const N = Number(process.env.BENCH_RECIPIENTS ?? 100_000);
const RUNS = Number(process.env.BENCH_RUNS ?? 3);
const TEMPLATE = corpusTemplate(process.env.BENCH_TEMPLATE ?? 'newsletter');
const BUSY_RATE = process.env.BENCH_WEBHOOK_BUSY_RATE;
const BAD = process.env.BENCH_WEBHOOK_BAD === '1';

interface RunResult extends StackResult {
  /** Messages/s until the SMTP sink had every message. */
  deliveredPerSecond: number;
  receiverCpuMicrosPerMessage?: number;
  /** Distinct events at the receiver when the sink had every message. */
  eventsAtDelivered?: number;
  /** With the bad endpoints: seconds from the last mail until the receiver had every event. */
  eventsLagSeconds?: number;
  /** With the bad endpoints: what each got in this run. */
  bad?: BadRunStats;
}

/** What the bad endpoints got in one run. */
interface BadRunStats {
  requests: { hanging: number; slow: number; big: number; redirect: number; forbidden: number };
  /** Most requests open at once at the hanging and the slow endpoint (over the whole bench so far). */
  maxOpen: { hanging: number; slow: number };
  /** Bytes of the 300 MB body the server had written when the connection closed: median and max. */
  bigWritten: { median: number; max: number };
  cpuMicros: number;
}

function badDelta(before: BadEndpointsStats, after: BadEndpointsStats): BadRunStats {
  const names = ['hanging', 'slow', 'big', 'redirect', 'forbidden'] as const;
  const requests = Object.fromEntries(
    names.map((name) => [name, after[name].requests - before[name].requests]),
  ) as BadRunStats['requests'];
  const written = after.written.slice(before.written.length).sort((a, b) => a - b);
  return {
    requests,
    maxOpen: { hanging: after.hanging.maxOpen, slow: after.slow.maxOpen },
    bigWritten: { median: written[Math.floor(written.length / 2)] ?? 0, max: written.at(-1) ?? 0 },
    cpuMicros: after.cpuMicros - before.cpuMicros,
  };
}

/** Waits until the receiver has `n` distinct webhook-ids; throws past a minute without progress. */
async function untilReceiverHas(hooks: SinkProcess, n: number): Promise<void> {
  let last = -1;
  let lastChange = performance.now();
  for (;;) {
    const got = await hooks.count();
    if (got >= n) return;
    if (got !== last) {
      last = got;
      lastChange = performance.now();
    } else if (performance.now() - lastChange > 60_000) {
      throw new Error(`the webhook receiver stalled at ${got} of ${n} events`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
}

async function run(
  sink: SinkProcess,
  hooks: SinkProcess,
  withEndpoint: boolean,
  bad: BadEndpointsProcess | undefined,
): Promise<RunResult> {
  if (!withEndpoint) {
    const result = await serveRun(sink, TEMPLATE, N);
    return { ...result, deliveredPerSecond: Math.round(N / (result.deliveredSeconds ?? result.seconds)) };
  }
  let receiverCpu0 = 0;
  let eventsAtDelivered = 0;
  let deliveredAt = 0;
  let eventsLagSeconds: number | undefined;
  let badBefore: BadEndpointsStats | undefined;
  const badEndpoints = bad
    ? [bad.endpoints.hanging, bad.endpoints.slow, bad.endpoints.big, bad.endpoints.redirect]
    : [];
  const result = await serveRun(sink, TEMPLATE, N, {
    args: [
      '--allow-host',
      `127.0.0.1:${hooks.port}`,
      // Every bad endpoint but the redirect's target.
      ...badEndpoints.flatMap((e) => ['--allow-host', e.host]),
      ...(BUSY_RATE !== undefined ? ['--webhook-busy-rate', BUSY_RATE] : []),
    ],
    async seed(mailroom, _projectId, secret) {
      await mailroom.webhooks.add(secret, {
        url: `http://127.0.0.1:${hooks.port}/hooks`,
        events: ['email.sent'],
      });
      for (const e of badEndpoints)
        await mailroom.webhooks.add(secret, { url: e.url, events: ['email.sent'] });
      await hooks.reset();
      receiverCpu0 = await hooks.cpuMicros();
      badBefore = await bad?.stats();
    },
    async settle() {
      deliveredAt = performance.now();
      eventsAtDelivered = await hooks.count();
      await untilReceiverHas(hooks, N);
      if (bad) eventsLagSeconds = +((performance.now() - deliveredAt) / 1000).toFixed(2);
    },
  });
  const got = await hooks.count();
  if (got !== N) throw new Error(`the webhook receiver got ${got} distinct events of ${N}`);
  return {
    ...result,
    deliveredPerSecond: Math.round(N / (result.deliveredSeconds ?? result.seconds)),
    receiverCpuMicrosPerMessage: Math.round(((await hooks.cpuMicros()) - receiverCpu0) / N),
    eventsAtDelivered,
    ...(eventsLagSeconds !== undefined ? { eventsLagSeconds } : {}),
    ...(bad && badBefore ? { bad: badDelta(badBefore, await bad.stats()) } : {}),
  };
}

const load = () => loadavg().map((l) => +l.toFixed(2));
const loadBefore = load();
const sink = await startSinkProcess();
const hooks = await startSinkProcess('./webhook-sink.ts');
const bad = BAD ? await startBadEndpointsProcess() : undefined;
try {
  const without: RunResult[] = [];
  const withHook: RunResult[] = [];
  for (let r = 0; r < RUNS; r++) {
    for (const on of r % 2 === 0 ? [false, true] : [true, false]) {
      const result = await run(sink, hooks, on, bad);
      (on ? withHook : without).push(result);
      console.log(`run ${r + 1} ${on ? 'with' : 'without'} the endpoint: ${JSON.stringify(result)}`);
    }
  }
  const side = (runs: RunResult[]) => ({
    deliveredPerSecond: runs.map((r) => r.deliveredPerSecond),
    deliveredMedian: median(runs.map((r) => r.deliveredPerSecond)),
    allEventsPerSecond: runs.map((r) => r.perSecond),
    deliveredSeconds: runs.map((r) => r.deliveredSeconds),
    seconds: runs.map((r) => r.seconds),
    cpuMicrosPerMessage: runs.map((r) => r.cpuMicrosPerMessage),
    deliveredCpuMicrosPerMessage: runs.map((r) => r.deliveredCpuMicrosPerMessage),
    sinkCpuMicrosPerMessage: runs.map((r) => r.sinkCpuMicrosPerMessage),
    peakRssMiB: runs.map((r) => r.peakRssMiB),
  });
  const ratios = withHook.map(
    (r, i) => +(r.deliveredPerSecond / (without[i] as RunResult).deliveredPerSecond).toFixed(3),
  );
  report(BAD ? 'delivery-webhooks-bad-endpoints' : 'delivery-webhooks', {
    unit: 'messages/s',
    recipients: N,
    template: TEMPLATE.ref,
    webhookBusyRate: BUSY_RATE ?? 'default',
    loadBefore,
    loadAfter: load(),
    without: side(without),
    withEndpoint: {
      ...side(withHook),
      receiverCpuMicrosPerMessage: withHook.map((r) => r.receiverCpuMicrosPerMessage),
      eventsAtDelivered: withHook.map((r) => r.eventsAtDelivered),
      ...(BAD
        ? { eventsLagSeconds: withHook.map((r) => r.eventsLagSeconds), bad: withHook.map((r) => r.bad) }
        : {}),
    },
    ratiosPerRound: ratios,
    ratioMedianOfRounds: median(ratios),
    ratioOfMedians: +(
      median(withHook.map((r) => r.deliveredPerSecond)) / median(without.map((r) => r.deliveredPerSecond))
    ).toFixed(3),
    ratioAllEventsOfMedians: +(
      median(withHook.map((r) => r.perSecond)) / median(without.map((r) => r.perSecond))
    ).toFixed(3),
  });
} finally {
  await bad?.close();
  await hooks.close();
  await sink.close();
}
