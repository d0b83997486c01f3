/**
 * Issue 40: the CPU one received message costs, in-process (no SMTP, no broadcast: the figure the
 * `inbound-receive` bench's rate depends on, measured without its noise). An engine on SQLite (as
 * `mailroom serve`) with a receiving route `support@` (destination `store`) takes the 17.8 KB message of
 * `support/inbound-sender.ts` (text, HTML, a 3 KB attachment) BENCH_MESSAGES times from 4 lanes through
 * `mailroom.receiving.receive` (parse, SPF/DKIM/DMARC/ARC against a loopback DNS server in another process,
 * store with its raw bytes and event). Reported per message: the process's CPU (every thread), the main
 * thread's own CPU (what the delivery loop loses; /proc, Linux), the main loop's busy time (wall clock:
 * inflated on a loaded machine) and the wall time.
 *
 * Environment: BENCH_MESSAGES (600), BENCH_LANES (4), BENCH_PARSE_THREADS (the engine's default when
 * unset; 0 parses on the main thread).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { createMailroom } from '@mailroom/core';
import { memoryTransport } from '@mailroom/memory';
import { sqlStore } from '@mailroom/sql';
import MailComposer from 'nodemailer/lib/mail-composer/index.js';
import { median, report } from './support/measure.js';

const MESSAGES = Number(process.env.BENCH_MESSAGES ?? 600);
const LANES = Number(process.env.BENCH_LANES ?? 4);
const THREADS = process.env.BENCH_PARSE_THREADS;
const RUNS = Number(process.env.BENCH_RUNS ?? 3);
const DOMAIN = 'in.bench.test';

async function startZone(): Promise<{ address: string; child: ChildProcess }> {
  const zone = {
    'sender.bench.test': { TXT: ['v=spf1 ip4:127.0.0.0/8 -all'] },
    '_dmarc.sender.bench.test': { TXT: ['v=DMARC1; p=none'] },
  };
  const child = spawn(
    process.execPath,
    [
      '--import',
      'tsx',
      fileURLToPath(new URL('./support/dns-zone-process.ts', import.meta.url)),
      JSON.stringify(zone),
    ],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  const address = await new Promise<string>((resolve, reject) => {
    let out = '';
    child.stdout?.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const found = /^dns (\S+)$/m.exec(out);
      if (found) resolve(found[1] as string);
    });
    child.once('exit', (code) => reject(new Error(`dns zone exited with ${code}`)));
  });
  return { address, child };
}

/**
 * CPU time of this process's main thread alone, in milliseconds (Linux: its task's utime + stime, in clock
 * ticks of 10 ms): what the delivery loop loses to a received message. Node 20 has no per-thread counter.
 */
function mainThreadCpuMs(): number {
  const stat = readFileSync(`/proc/self/task/${process.pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

const paragraph = 'Hello, I have a question about my order and the invoice attached to this message. ';
const raw = new Uint8Array(
  await new MailComposer({
    from: 'Ana Lopez <ana@sender.bench.test>',
    to: `support@${DOMAIN}`,
    subject: 'A question about order 4217',
    text: paragraph.repeat(90),
    html: `<p>${paragraph.repeat(60)}</p>`,
    attachments: [{ filename: 'invoice.txt', content: 'x'.repeat(3_000) }],
  })
    .compile()
    .build(),
);

const zone = await startZone();
const dir = mkdtempSync(join(tmpdir(), 'mailroom-inbound-cpu-'));
const mailroom = createMailroom({
  store: sqlStore({ url: join(dir, 'bench.db') }),
  transport: memoryTransport(),
  receiving: {
    dnsServers: [zone.address],
    ...(THREADS === undefined ? {} : { parseThreads: Number(THREADS) }),
  },
});
try {
  const { secret } = await mailroom.admin.createProject({ name: 'Bench' });
  await mailroom.receiving.addRoute(secret, {
    domain: DOMAIN,
    pattern: 'support',
    destination: { kind: 'store' },
  });
  const receive = (i: number) =>
    mailroom.receiving.receive(raw, {
      envelopeFrom: 'ana@sender.bench.test',
      envelopeTo: [`support@${DOMAIN}`],
      remoteAddress: `127.0.0.${2 + (i % 4)}`,
      helo: 'mx.sender.bench.test',
    });
  const batch = async (count: number) => {
    let next = 0;
    await Promise.all(
      Array.from({ length: LANES }, async () => {
        while (next < count) {
          const receipt = await receive(next++);
          if (receipt.messageIds.length !== 1) throw new Error('not routed');
        }
      }),
    );
  };
  await mailroom.receiving.warm(); // the parse threads loaded, as the listener starts them
  await batch(100); // warm: modules loaded, JIT
  const load = loadavg()[0];
  const runs: Array<{ cpuMs: number; mainCpuMs: number; mainBusyMs: number; wallMs: number }> = [];
  for (let r = 0; r < RUNS; r++) {
    const main0 = mainThreadCpuMs();
    const cpu0 = process.cpuUsage();
    const elu0 = performance.eventLoopUtilization();
    const t0 = performance.now();
    await batch(MESSAGES);
    const wall = performance.now() - t0;
    const elu = performance.eventLoopUtilization(elu0);
    const cpu = process.cpuUsage(cpu0);
    const main = mainThreadCpuMs() - main0;
    const run = {
      cpuMs: (cpu.user + cpu.system) / 1000 / MESSAGES,
      mainCpuMs: main / MESSAGES,
      mainBusyMs: elu.active / MESSAGES,
      wallMs: wall / MESSAGES,
    };
    runs.push(run);
    console.log(`run ${r + 1}: ${JSON.stringify(run)}`);
  }
  const round = (v: number) => Math.round(v * 100) / 100;
  report('inbound-cpu', {
    messages: MESSAGES,
    lanes: LANES,
    runs: RUNS,
    parseThreads: THREADS ?? 'default',
    loadAverageAtStart: load,
    loadAverageAtEnd: loadavg()[0],
    cpuMsPerMessage: round(median(runs.map((r) => r.cpuMs))),
    mainThreadCpuMsPerMessage: round(median(runs.map((r) => r.mainCpuMs))),
    mainLoopBusyMsPerMessage: round(median(runs.map((r) => r.mainBusyMs))),
    wallMsPerMessage: round(median(runs.map((r) => r.wallMs))),
    messagesPerSecond: Math.round(1000 / median(runs.map((r) => r.wallMs))),
  });
} finally {
  await mailroom.close();
  zone.child.kill('SIGTERM');
  rmSync(dir, { recursive: true, force: true });
}
