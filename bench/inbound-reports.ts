/**
 * Issue 25: how many bounce reports `mailroom serve`'s inbound listener takes per second, and its CPU per
 * report. `mailroom serve` (its own process, SQLite file, outbox delivery, `--bounce-domain`,
 * `--inbound-port`, this host as a trusted relay) first sends a broadcast of BENCH_REPORTS recipients to
 * its outbox; then this process, standing for the organisation's relay, mails real DSNs from the corpus
 * (`packages/core/test/fixtures/bounce-corpus`, the messages Sisimai's tests read as bounces, unchanged) to
 * the return paths of those messages over SMTP, BENCH_CONNECTIONS at a time. The return-path token names
 * the delivery (the corpus's own Message-IDs and recipients are recorded as what the report named).
 * Timed from the first report until the last reply; CPU is serve's (all threads, from /proc).
 *
 * Nothing lost: every report must be answered 250 (a 4xx is retried, as a relay does, and counted), every
 * `applied` answer must have its signal in the database, and the engine's count of inbound messages
 * (`/metrics`) must equal the reports. Goal: >= 500 reports/s.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { smtpTransport } from '@mailroom/smtp';
import { sqlStore } from '@mailroom/sql';
import { startCli } from './support/cli-process.js';
import { median, report } from './support/measure.js';

const REPORTS = Number(process.env.BENCH_REPORTS ?? 20_000);
const RUNS = Number(process.env.BENCH_RUNS ?? 3);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 8);
const DOMAIN = 'bounces.bench.test';
const CORPUS = fileURLToPath(new URL('../packages/core/test/fixtures/bounce-corpus/', import.meta.url));

interface RunResult {
  reportsPerSecond: number;
  seconds: number;
  cpuMicrosPerReport: number;
  outcomes: Record<string, number>;
  retried: number;
  lost: number;
  peakRssMiB: number;
}

/** The corpus's bounces, with CRLF line ends as they travel over SMTP. */
function corpusBounces(): Buffer[] {
  const manifest = JSON.parse(readFileSync(join(CORPUS, 'manifest.json'), 'utf8')) as {
    messages: Array<{ file: string; kind: string }>;
  };
  return manifest.messages
    .filter((m) => m.kind === 'bounce')
    .map((m) =>
      Buffer.from(readFileSync(join(CORPUS, 'messages', m.file), 'utf8').replace(/\r?\n/g, '\r\n'), 'utf8'),
    );
}

async function waitFor<T>(what: string, fn: () => Promise<T | undefined> | T | undefined, ms = 600_000) {
  const until = Date.now() + ms;
  for (;;) {
    const found = await fn();
    if (found !== undefined) return found;
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

/** The Return-Path of every .eml in `dir` (the VERP address of each delivery). */
function returnPaths(dir: string): string[] {
  return readdirSync(dir)
    .filter((f) => f.endsWith('.eml'))
    .map((f) => {
      const head = readFileSync(join(dir, f), 'utf8').slice(0, 400);
      const m = /^Return-Path: <([^>]+)>/m.exec(head);
      if (!m) throw new Error(`no Return-Path in ${f}`);
      return m[1] as string;
    });
}

async function run(bounces: Buffer[]): Promise<RunResult> {
  const dir = mkdtempSync(join(tmpdir(), 'mailroom-bench-inbound-'));
  const db = join(dir, 'mailroom.db');
  const outbox = join(dir, 'outbox');
  const serve = await startCli([
    'serve',
    '--port',
    '0',
    '--database',
    db,
    '--outbox',
    outbox,
    '--bounce-domain',
    DOMAIN,
    '--inbound-port',
    '0',
    '--inbound-host',
    '127.0.0.1',
    '--inbound-trusted-relay',
    '127.0.0.1/32',
    '--metrics',
    '--no-dashboard',
  ]);
  try {
    const banner = await waitFor('the banner', () => {
      const out = serve.output();
      const port = /inbound SMTP on 127\.0\.0\.1:(\d+)/.exec(out)?.[1];
      const secret = /(sk_live_[\w-]+)/.exec(out)?.[1];
      const sender = /with the sender (\S+)/.exec(out)?.[1];
      const project = /\((prj_[a-z0-9]+)\) with the sender/.exec(out)?.[1];
      return port && secret && sender && project
        ? { port: Number(port), secret, sender, project }
        : undefined;
    });
    // The broadcast whose deliveries the reports are about, sent to the outbox.
    const headers = { authorization: `Bearer ${banner.secret}`, 'content-type': 'application/json' };
    let ref: string | undefined;
    for (let i = 0; i < REPORTS; i += 250) {
      const recipients = Array.from(
        { length: Math.min(250, REPORTS - i) },
        (_, j) => `r${i + j}@dest${j % 50}.test`,
      );
      const res = await fetch(`${serve.url}/send/mail/broadcast`, {
        method: 'POST',
        headers,
        body: JSON.stringify(
          ref
            ? { broadcastRef: ref, recipients }
            : { subject: 'News', sender: banner.sender, message: 'Hi', recipients },
        ),
      });
      if (res.status !== 200) throw new Error(`broadcast answered ${res.status}: ${await res.text()}`);
      ref ??= ((await res.json()) as { data: { broadcastRef: string } }).data.broadcastRef;
    }
    // Every delivery recorded as sent (a report about one that is not would be deferred).
    const reader = sqlStore({ url: db });
    try {
      await waitFor('the broadcast to be sent', async () => {
        const mailing = await reader.getMailing(banner.project, ref as string);
        const counts = mailing && (await reader.countDeliveries(mailing.id));
        return counts && counts.sent === REPORTS ? true : undefined;
      });
    } finally {
      await reader.close();
    }
    const paths = returnPaths(outbox);
    if (paths.length !== REPORTS)
      throw new Error(`${paths.length} messages in the outbox, expected ${REPORTS}`);

    // The relay: a pool of connections, every report retried on 4xx until it is taken.
    const client = smtpTransport({
      host: '127.0.0.1',
      port: banner.port,
      ignoreTLS: true,
      maxConnections: CONNECTIONS,
      maxMessages: Number.POSITIVE_INFINITY,
    });
    const outcomes: Record<string, number> = {};
    let retried = 0;
    let lost = 0;
    const cpuBefore = serve.cpuMicros();
    const started = performance.now();
    let next = 0;
    const sendOne = async (i: number) => {
      const raw = bounces[i % bounces.length] as Buffer;
      for (let attempt = 1; ; attempt++) {
        try {
          const receipt = await client.send({
            messageId: `<report-${i}@relay.bench.test>`,
            envelope: { from: '', to: [paths[i] as string] },
            raw,
          });
          const outcome = /Ok: (\w+)/.exec(receipt.response)?.[1] ?? 'other';
          outcomes[outcome] = (outcomes[outcome] ?? 0) + 1;
          return;
        } catch (error) {
          const reply = (error as { response?: string }).response ?? '';
          if (!/^4/.test(reply) || attempt >= 20) {
            lost++;
            return;
          }
          retried++;
          await new Promise((resolve) => setTimeout(resolve, 100));
        }
      }
    };
    // Twice as many sends in flight as connections, so that no connection waits for the next message.
    await Promise.all(
      Array.from({ length: CONNECTIONS * 2 }, async () => {
        while (next < REPORTS) await sendOne(next++);
      }),
    );
    const seconds = (performance.now() - started) / 1000;
    const cpu = serve.cpuMicros() - cpuBefore;
    await client.close();

    const metrics = await (await fetch(`${serve.url}/metrics`)).text();
    let counted = 0;
    for (const line of metrics.split('\n')) {
      if (line.startsWith('mailroom_inbound_messages_total{') && !line.includes('outcome="deferred"')) {
        counted += Number(line.slice(line.lastIndexOf(' ') + 1));
      }
    }
    const peakRssMiB = serve.peakRssMiB();
    await serve.stop();
    const store = sqlStore({ url: db });
    const kinds = ['hard-bounce', 'soft-bounce', 'sender-side', 'complaint', 'delivered'] as const;
    const signals = (
      await store.countInboundSignals({ projectId: banner.project, kinds: [...kinds] })
    ).reduce((sum, g) => sum + g.count, 0);
    await store.close();
    const answered = Object.values(outcomes).reduce((a, b) => a + b, 0);
    lost += REPORTS - answered - lost;
    if (counted !== REPORTS) lost = Math.max(lost, REPORTS - counted);
    if (signals !== (outcomes.applied ?? 0))
      lost = Math.max(lost, Math.abs((outcomes.applied ?? 0) - signals));
    return {
      reportsPerSecond: Math.round(REPORTS / seconds),
      seconds: Math.round(seconds * 100) / 100,
      cpuMicrosPerReport: Math.round(cpu / REPORTS),
      outcomes,
      retried,
      lost,
      peakRssMiB,
    };
  } finally {
    await serve.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

const bounces = corpusBounces();
const loadBefore = loadavg()[0];
const runs: RunResult[] = [];
for (let i = 0; i < RUNS; i++) {
  runs.push(await run(bounces));
  console.error(`run ${i + 1}: ${JSON.stringify(runs.at(-1))}`);
}
report('inbound-reports', {
  reports: REPORTS,
  corpusBounces: bounces.length,
  connections: CONNECTIONS,
  loadAverage: { before: loadBefore, after: loadavg()[0] },
  reportsPerSecond: runs.map((r) => r.reportsPerSecond),
  medianReportsPerSecond: median(runs.map((r) => r.reportsPerSecond)),
  cpuMicrosPerReport: runs.map((r) => r.cpuMicrosPerReport),
  medianCpuMicrosPerReport: median(runs.map((r) => r.cpuMicrosPerReport)),
  peakRssMiB: runs.map((r) => r.peakRssMiB),
  outcomes: runs.map((r) => r.outcomes),
  retried: runs.map((r) => r.retried),
  lost: runs.map((r) => r.lost),
});
if (runs.some((r) => r.lost > 0)) process.exitCode = 1;
