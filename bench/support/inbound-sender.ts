/**
 * The inbound load of `bench/inbound-receive.ts`, in a process of its own (its CPU is not the server's):
 * sends one 20 KB message (text, HTML and a small attachment; prebuilt, sent raw) over CONNECTIONS
 * connections to `support@<domain>` at the listener on 127.0.0.1:PORT, as fast as each is answered,
 * until SIGTERM (waiting for the listener to come up first). SIGUSR1 marks the start of the measured
 * window; on SIGTERM it prints `inbound {"accepted":N,"refused":N,"seconds":S,"senderCpuMs":C}` for the window, counting
 * only 250 answers that name a stored message (`received inm_...`), and its own CPU per accepted message.
 *
 * Usage: inbound-sender.ts PORT DOMAIN CONNECTIONS [pipelining]
 *
 * `pipelining` (RFC 2920, which the listener advertises): MAIL, RCPT and DATA go in one write and their three
 * replies are read after it, then the message; two round trips a message instead of four, as Postfix, Exim and
 * Gmail send to a server that offers it. Without it each command waits for the last one's reply.
 */
import MailComposer from 'nodemailer/lib/mail-composer/index.js';
import { dataOf, openRawSmtp } from './raw-smtp-client.js';

const [port, domain, connections, pipelining] = [
  Number(process.argv[2]),
  String(process.argv[3]),
  Number(process.argv[4] ?? 4),
  process.argv[5] === 'pipelining',
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

const data = dataOf(raw);
let accepted = 0;
let refused = 0;
let up = false;
let running = true;
let t0 = performance.now();
let cpu0 = process.cpuUsage();

/**
 * One connection per lane, each from its own loopback address (127.0.0.2, .3, ...): four relays, as the
 * listener's per-address limits (10 connections, 6,000 messages a minute) see them. Messages follow one
 * another on the connection (MAIL, RCPT, DATA, the bytes), each sent when the last is answered (or, with
 * `pipelining`, MAIL, RCPT and DATA together).
 */
async function lane(i: number): Promise<void> {
  while (running) {
    const conn = openRawSmtp(port, `127.0.0.${2 + i}`);
    try {
      if (!(await conn.say()).startsWith('220')) throw new Error('no greeting');
      if (!(await conn.say('EHLO mx.sender.bench.test\r\n')).startsWith('250'))
        throw new Error('EHLO refused');
      while (running) {
        const mailCommand = 'MAIL FROM:<ana@sender.bench.test>\r\n';
        const rcptCommand = `RCPT TO:<${to}>\r\n`;
        if (pipelining) {
          const mail = await conn.say(`${mailCommand}${rcptCommand}DATA\r\n`);
          const rcpt = await conn.say();
          const go = await conn.say();
          up = true;
          if (!mail.startsWith('250')) throw new Error('MAIL refused');
          if (!rcpt.startsWith('250') || !go.startsWith('354')) {
            // DATA is answered 503 / 554 when no recipient was taken: nothing to send.
            refused++;
            await conn.say('RSET\r\n');
            continue;
          }
        } else {
          if (!(await conn.say(mailCommand)).startsWith('250')) throw new Error('MAIL refused');
          const rcpt = await conn.say(rcptCommand);
          up = true;
          if (!rcpt.startsWith('250')) {
            refused++;
            await conn.say('RSET\r\n');
            continue;
          }
          if (!(await conn.say('DATA\r\n')).startsWith('354')) throw new Error('DATA refused');
        }
        const answer = await conn.say(data);
        if (answer.startsWith('250') && /received inm_/.test(answer)) accepted++;
        else refused++;
      }
      await conn.say('QUIT\r\n').catch(() => {});
    } catch {
      // Before the listener is up: wait for it. After: the message is refused, the lane connects again.
      if (up) refused++;
      await new Promise((resolve) => setTimeout(resolve, 50));
    } finally {
      conn.close();
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
  // Its own CPU per message sent: while this stays small, the load generator is not the bottleneck.
  const cpu = process.cpuUsage(cpu0);
  const senderCpuMs = accepted > 0 ? +((cpu.user + cpu.system) / 1000 / accepted).toFixed(2) : null;
  const line = `inbound ${JSON.stringify({ accepted, refused, seconds: +seconds.toFixed(2), senderCpuMs })}\n`;
  void Promise.allSettled(lanes).then(() => {
    process.stdout.write(line, () => process.exit(0));
  });
});
