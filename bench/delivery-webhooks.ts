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
 */
import { loadavg } from 'node:os';
import { median, report } from './support/measure.js';
import { type StackResult, serveRun } from './support/serve-run.js';
import { type SinkProcess, startSinkProcess } from './support/sink-process.js';
import { corpusTemplate } from './templates/index.js';

const N = Number(process.env.BENCH_RECIPIENTS ?? 100_000);
const RUNS = Number(process.env.BENCH_RUNS ?? 3);
const TEMPLATE = corpusTemplate(process.env.BENCH_TEMPLATE ?? 'newsletter');
const BUSY_RATE = process.env.BENCH_WEBHOOK_BUSY_RATE;

interface RunResult extends StackResult {
  /** Messages/s until the SMTP sink had every message. */
  deliveredPerSecond: number;
  receiverCpuMicrosPerMessage?: number;
  /** Distinct events at the receiver when the sink had every message. */
  eventsAtDelivered?: number;
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

async function run(sink: SinkProcess, hooks: SinkProcess, withEndpoint: boolean): Promise<RunResult> {
  if (!withEndpoint) {
    const result = await serveRun(sink, TEMPLATE, N);
    return { ...result, deliveredPerSecond: Math.round(N / (result.deliveredSeconds ?? result.seconds)) };
  }
  let receiverCpu0 = 0;
  let eventsAtDelivered = 0;
  const result = await serveRun(sink, TEMPLATE, N, {
    args: [
      '--allow-host',
      `127.0.0.1:${hooks.port}`,
      ...(BUSY_RATE !== undefined ? ['--webhook-busy-rate', BUSY_RATE] : []),
    ],
    async seed(mailroom, _projectId, secret) {
      await mailroom.webhooks.add(secret, {
        url: `http://127.0.0.1:${hooks.port}/hooks`,
        events: ['email.sent'],
      });
      await hooks.reset();
      receiverCpu0 = await hooks.cpuMicros();
    },
    async settle() {
      eventsAtDelivered = await hooks.count();
      await untilReceiverHas(hooks, N);
    },
  });
  const got = await hooks.count();
  if (got !== N) throw new Error(`the webhook receiver got ${got} distinct events of ${N}`);
  return {
    ...result,
    deliveredPerSecond: Math.round(N / (result.deliveredSeconds ?? result.seconds)),
    receiverCpuMicrosPerMessage: Math.round(((await hooks.cpuMicros()) - receiverCpu0) / N),
    eventsAtDelivered,
  };
}

const load = () => loadavg().map((l) => +l.toFixed(2));
const loadBefore = load();
const sink = await startSinkProcess();
const hooks = await startSinkProcess('./webhook-sink.ts');
try {
  const without: RunResult[] = [];
  const withHook: RunResult[] = [];
  for (let r = 0; r < RUNS; r++) {
    for (const on of r % 2 === 0 ? [false, true] : [true, false]) {
      const result = await run(sink, hooks, on);
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
  report('delivery-webhooks', {
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
  await hooks.close();
  await sink.close();
}
