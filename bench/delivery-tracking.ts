/**
 * Issue 17: delivery with open and click tracking on, against the same delivery with it off, in the same
 * run, as users run Mailroom: `mailroom serve` on its defaults (the built CLI, SQLite file, the loopback
 * sink as relay) fed over HTTP by `support/serve-run.ts`, once as it is and once with `--track-opens
 * --track-clicks --public-url http://127.0.0.1:PORT` (nothing listens there: no link is followed), on the
 * corpus templates that have links. The order of the two alternates between runs. Before a side's figures
 * count, the first message the sink got is checked: tracked links and the pixel with tracking on, neither
 * with it off. The target: tracking on within 10 % of tracking off (median messages/s), per template.
 *
 * Environment: BENCH_RECIPIENTS (20000), BENCH_RUNS (3), BENCH_TEMPLATES (newsletter, receipt,
 * plan-message, password-reset, esp-export: every corpus template with an HTML part), BENCH_CPU_PROF (a
 * directory: CPU profiles of the serve processes).
 */
import { loadavg } from 'node:os';
import { simpleParser } from 'mailparser';
import { median, report } from './support/measure.js';
import { type StackResult, serveRun } from './support/serve-run.js';
import { type SinkProcess, startSinkProcess } from './support/sink-process.js';
import { type CorpusTemplate, corpusTemplate } from './templates/index.js';

const N = Number(process.env.BENCH_RECIPIENTS ?? 20_000);
const RUNS = Number(process.env.BENCH_RUNS ?? 3);
const TEMPLATES = (process.env.BENCH_TEMPLATES ?? 'newsletter,receipt,plan-message,password-reset,esp-export')
  .split(',')
  .map(corpusTemplate);
/** The tracking base: loopback, never requested by the benchmark. */
const PUBLIC_URL = 'http://127.0.0.1:18017';
const TRACKING_ARGS = ['--track-opens', '--track-clicks', '--public-url', PUBLIC_URL];

/** Throws unless the sink's first message is tracked (links and pixel) exactly when `tracking` is. */
async function checkSample(sink: SinkProcess, template: CorpusTemplate, tracking: boolean): Promise<void> {
  const raw = await sink.sample();
  if (raw === null) throw new Error(`${template.ref}: the sink kept no message`);
  const html = (await simpleParser(Buffer.from(raw, 'latin1'))).html || '';
  const clicks = html.split(`${PUBLIC_URL}/t/c/`).length - 1;
  const pixel = html.includes(`${PUBLIC_URL}/t/o/`);
  if (tracking ? clicks === 0 || !pixel : clicks > 0 || pixel || html.includes('/t/c/')) {
    throw new Error(
      `${template.ref}, tracking ${tracking ? 'on' : 'off'}: ${clicks} tracked links, pixel ${pixel}`,
    );
  }
}

async function side(sink: SinkProcess, template: CorpusTemplate, tracking: boolean): Promise<StackResult> {
  const result = await serveRun(sink, template, N, tracking ? { args: TRACKING_ARGS } : {});
  await checkSample(sink, template, tracking);
  return result;
}

function summary(runs: StackResult[]) {
  return {
    median: median(runs.map((r) => r.perSecond)),
    runs: runs.map((r) => r.perSecond),
    cpuMicrosPerMessage: runs.map((r) => r.cpuMicrosPerMessage),
    cpuMedian: median(runs.map((r) => r.cpuMicrosPerMessage)),
    peakRssMiB: Math.max(...runs.map((r) => r.peakRssMiB ?? 0)),
  };
}

const sink = await startSinkProcess();
const loadBefore = loadavg()[0] ?? 0;
try {
  for (const template of TEMPLATES) {
    const off: StackResult[] = [];
    const on: StackResult[] = [];
    const loadStart = loadavg()[0] ?? 0;
    for (let r = 0; r < RUNS; r++) {
      // Alternate which goes first, so a drift of the machine's load does not favour one side.
      for (const tracking of r % 2 === 0 ? [false, true] : [true, false]) {
        const result = await side(sink, template, tracking);
        (tracking ? on : off).push(result);
        console.log(
          `${template.ref} run ${r + 1} tracking ${tracking ? 'on' : 'off'}: ${JSON.stringify(result)}`,
        );
      }
    }
    const offMedian = median(off.map((r) => r.perSecond));
    const onMedian = median(on.map((r) => r.perSecond));
    report('delivery-tracking', {
      template: template.ref,
      unit: 'messages/s',
      recipients: N,
      trackingOff: summary(off),
      trackingOn: summary(on),
      ratioOnToOff: +(onMedian / offMedian).toFixed(3),
      ratiosPerRun: on.map((r, i) => +(r.perSecond / (off[i] as StackResult).perSecond).toFixed(3)),
      cpuAddedMicrosPerMessage:
        median(on.map((r) => r.cpuMicrosPerMessage)) - median(off.map((r) => r.cpuMicrosPerMessage)),
      loadAverage: [loadStart, loadavg()[0] ?? 0].map((l) => +l.toFixed(2)),
    });
  }
} finally {
  await sink.close();
  console.log(
    `load average (1 min): ${loadBefore.toFixed(2)} before, ${(loadavg()[0] ?? 0).toFixed(2)} after`,
  );
}
