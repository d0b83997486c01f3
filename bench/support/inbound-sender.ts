/**
 * The inbound load of `bench/inbound-receive.ts`, in a process of its own (its CPU is not the server's):
 * sends one 20 KB message (text, HTML and a small attachment; prebuilt, sent raw) over CONNECTIONS
 * connections to `support@<domain>` at the listener on 127.0.0.1:PORT, as fast as each is answered,
 * until SIGTERM (waiting for the listener to come up first). SIGUSR1 marks the start of the measured
 * window; on SIGTERM it prints `inbound {"accepted":N,"refused":N,"seconds":S}` for the window, counting
 * only 250 answers that name a stored message (`received inm_...`), and its own CPU per accepted message.
 *
 * Usage: inbound-sender.ts PORT DOMAIN CONNECTIONS
 */
import nodemailer from 'nodemailer';
import MailComposer from 'nodemailer/lib/mail-composer/index.js';

const [port, domain, connections] = [
  Number(process.argv[2]),
  String(process.argv[3]),
  Number(process.argv[4] ?? 4),
];
const to = `support@${domain}`;
const paragraph = 'Hello, I have a question about my order and the invoice attached to this message. ';
const raw = await new MailComposer({
  from: 'Ana Lopez <ana@sender.bench.test>',
  to,
  subject: 'A question about order 4217',
  text: paragraph.repeat(90),
  html: `<p>${paragraph.repeat(60)}</p>`,
  attachments: [{ filename: 'invoice.txt', content: 'x'.repeat(3_000) }],
})
  .compile()
  .build();

// One connection per lane, each from its own loopback address (127.0.0.2, .3, ...): four relays, as the
// listener's per-address limits (10 connections, 6,000 messages a minute) see them.
const transports = Array.from({ length: connections }, (_, i) =>
  nodemailer.createTransport({
    host: '127.0.0.1',
    port,
    secure: false,
    ignoreTLS: true,
    pool: true,
    maxConnections: 1,
    maxMessages: Number.POSITIVE_INFINITY,
    localAddress: `127.0.0.${2 + i}`,
  }),
);
let accepted = 0;
let refused = 0;
let up = false;
let running = true;
let t0 = performance.now();
let cpu0 = process.cpuUsage();

async function lane(i: number): Promise<void> {
  const transport = transports[i] as (typeof transports)[number];
  while (running) {
    try {
      const info = await transport.sendMail({ envelope: { from: 'ana@sender.bench.test', to: [to] }, raw });
      up = true;
      if (/received inm_/.test(info.response)) accepted++;
      else refused++;
    } catch (error) {
      // Before the listener is up: wait for it.
      if (!up && (error as { code?: string }).code !== 'EPROTOCOL') {
        await new Promise((resolve) => setTimeout(resolve, 50));
        continue;
      }
      refused++;
    }
  }
}

process.on('SIGUSR1', () => {
  accepted = 0;
  refused = 0;
  t0 = performance.now();
  cpu0 = process.cpuUsage();
});

const lanes = Array.from({ length: connections }, (_, i) => lane(i));
process.stdout.write(`started ${raw.length}\n`);
process.once('SIGTERM', () => {
  running = false;
  const seconds = (performance.now() - t0) / 1000;
  // Counted at the signal: messages still in flight do not stretch the window.
  const line = `inbound ${JSON.stringify({ accepted, refused, seconds: +seconds.toFixed(2) })}\n`;
  void Promise.allSettled(lanes).then(() => {
    for (const transport of transports) transport.close();
    process.stdout.write(line, () => process.exit(0));
  });
});
