/**
 * Issue 30, item 6: the sending rate of a broadcast while the inbound listener is abused, against the
 * same broadcast without abuse, in the same run. One engine per round (memory store, `smtpTransport`
 * with 5 connections to the counting sink in its own process, the bounce domain set, so every message
 * carries a VERP return path), with `inboundSmtpServer` listening on 127.0.0.1. In the abused rounds a
 * separate process (`support/inbound-abuser.ts`) holds 20 idle connections from two addresses, sends
 * forged return-path tokens on two connections at BENCH_ABUSE_FORGED_RATE messages a second each (100:
 * what one address may sustain under the listener's default per-address rate; 0: as fast as they are
 * answered, which on a 2-core machine measures the abuser's CPU as much as the listener's), and sends a
 * message with 100,000 header lines every second. Timed from `worker.start()` until the sink has every message;
 * acceptance is not timed. Rounds alternate which goes first, so drift on a shared machine spreads evenly.
 *
 * Environment: BENCH_RECIPIENTS (5000), BENCH_RUNS (3), BENCH_ABUSE_FORGED_RATE (100). Goal: abused rate within 20 % of the plain one.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';
import { createMailroom } from '@mailroom/core';
import { memoryStore } from '@mailroom/memory';
import { inboundSmtpServer, smtpTransport } from '@mailroom/smtp';
import { median, peakRssMiB, report } from './support/measure.js';
import { type SinkProcess, startSinkProcess } from './support/sink-process.js';

const N = Number(process.env.BENCH_RECIPIENTS ?? 5000);
const RUNS = Number(process.env.BENCH_RUNS ?? 3);
const DOMAIN = 'bounces.bench.test';
const FORGED_RATE = Number(process.env.BENCH_ABUSE_FORGED_RATE ?? 100);

interface Round {
  perSecond: number;
  abuse?: Record<string, number>;
}

async function startAbuser(
  port: number,
): Promise<{ child: ChildProcess; stop: () => Promise<Record<string, number>> }> {
  const child = spawn(
    process.execPath,
    [
      '--import',
      'tsx',
      fileURLToPath(new URL('./support/inbound-abuser.ts', import.meta.url)),
      String(port),
      DOMAIN,
      String(FORGED_RATE),
    ],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  let out = '';
  child.stdout?.on('data', (chunk: Buffer) => {
    out += chunk.toString();
  });
  await new Promise<void>((resolve, reject) => {
    const timer = setInterval(() => {
      if (out.includes('started')) {
        clearInterval(timer);
        resolve();
      }
    }, 20);
    child.once('exit', (code) => reject(new Error(`the abuser exited with ${code}`)));
  });
  return {
    child,
    stop: async () => {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      await exited;
      const line = /^abuse (.*)$/m.exec(out)?.[1];
      return line ? (JSON.parse(line) as Record<string, number>) : {};
    },
  };
}

async function round(sink: SinkProcess, abused: boolean): Promise<Round> {
  await sink.reset();
  const mailroom = createMailroom({
    store: memoryStore(),
    transport: smtpTransport({ host: '127.0.0.1', port: sink.port, ignoreTLS: true, maxConnections: 5 }),
    bounces: { domain: DOMAIN },
  });
  const server = await inboundSmtpServer({ inbound: mailroom.inbound, host: '127.0.0.1', port: 0 });
  try {
    const { project, secret } = await mailroom.admin.createProject({ name: 'Bench' });
    await mailroom.admin.addSender(project.id, { address: 'news@acme.test' });
    let ref: string | undefined;
    for (let i = 0; i < N; i += 250) {
      const recipients = Array.from(
        { length: Math.min(250, N - i) },
        (_, j) => `r${i + j}@dest${j % 20}.test`,
      );
      const result = await mailroom.broadcast(
        secret,
        ref
          ? { broadcastRef: ref, recipients }
          : { subject: 'News', sender: 'news@acme.test', message: 'Hi {{ name }}', recipients },
      );
      ref ??= result.ref;
    }
    const abuser = abused ? await startAbuser(server.port) : undefined;
    // Let the idle connections settle in before the clock starts.
    if (abuser) await new Promise((resolve) => setTimeout(resolve, 500));
    const t0 = performance.now();
    mailroom.worker.start();
    while ((await sink.count()) < N) await new Promise((resolve) => setTimeout(resolve, 20));
    const seconds = (performance.now() - t0) / 1000;
    const abuse = await abuser?.stop();
    return { perSecond: Math.round(N / seconds), ...(abuse ? { abuse } : {}) };
  } finally {
    await server.close();
    await mailroom.close();
  }
}

const sink = await startSinkProcess();
try {
  const plain: Round[] = [];
  const abused: Round[] = [];
  const load = loadavg()[0];
  for (let r = 0; r < RUNS; r++) {
    const order = r % 2 === 0 ? [false, true] : [true, false];
    for (const isAbused of order) {
      const result = await round(sink, isAbused);
      (isAbused ? abused : plain).push(result);
      console.log(`run ${r + 1} ${isAbused ? 'abused' : 'plain'}: ${JSON.stringify(result)}`);
    }
  }
  const plainRate = median(plain.map((p) => p.perSecond));
  const abusedRate = median(abused.map((p) => p.perSecond));
  report('inbound-abuse', {
    recipients: N,
    runs: RUNS,
    forgedRatePerConnection: FORGED_RATE,
    loadAverageAtStart: load,
    plainPerSecond: plainRate,
    abusedPerSecond: abusedRate,
    ratio: Math.round((abusedRate / plainRate) * 100) / 100,
    abuse: abused.map((a) => a.abuse),
    peakRssMiB: peakRssMiB(),
  });
} finally {
  await sink.close();
}
