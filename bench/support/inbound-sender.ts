/**
 * The inbound load of `bench/inbound-receive.ts`, in a process of its own (its CPU is not the server's):
 * sends one 20 KB message (text, HTML and a small attachment; prebuilt, sent raw) over CONNECTIONS
 * connections to `support@<domain>` at the listener on 127.0.0.1:PORT, at RATE messages a second in all
 * (0: as fast as each is answered), until SIGTERM (waiting for the listener to come up first). SIGUSR1 marks
 * the start of the measured window; on SIGTERM it prints
 * `inbound {"accepted":N,"refused":N,"seconds":S,"senderCpuMs":C,"late":L}` for the window, counting only 250
 * answers that name a stored message (`received inm_...`), and its own CPU per accepted message.
 *
 * Usage: inbound-sender.ts PORT DOMAIN CONNECTIONS [pipelining|one-at-a-time] [RATE]
 *
 * RATE > 0 is an open-loop schedule: connection i sends its k-th message at `mark + (k + i / CONNECTIONS) *
 * CONNECTIONS / RATE` (the lanes staggered), or when its last message is answered if that is later; a lane that
 * fell behind sends each next message as soon as the last is answered until it is back on its schedule, never
 * ahead of it. So the offered load is RATE whatever the server does, and the accepted rate says whether it kept
 * up. At SIGTERM the messages a lane had started inside the window are waited for and counted when accepted
 * (they were offered in the window; with RATE = 0 they are not, as before: counted at the signal). `late`: how
 * many messages were sent more than one interval behind their time (the server or the machine falling behind).
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
const rate = Number(process.argv[6] ?? 0);
/** A lane's interval between two messages on its schedule, in ms (0: unpaced). */
const interval = rate > 0 ? (1000 * connections) / rate : 0;
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
let late = 0;
let t0 = performance.now();
let cpu0 = process.cpuUsage();
/** The window's state: a message counts only if it was sent in the current window (`window` at its send). */
let window = 0;
let closed = false;
/** Each lane's next message number on the schedule, from `t0` (reset at the mark). */
const due = Array.from({ length: connections }, () => 0);

/** Waits for lane `i`'s next time on the schedule (at once when it is behind); counts a late send. */
async function onSchedule(i: number): Promise<void> {
  if (interval === 0) return;
  // Before the mark (the listener starting), a lane that fell behind starts its schedule again rather than
  // catching up in a burst; inside the window it catches up, as an open-loop load does.
  let k = due[i] ?? 0;
  if (window === 0 && t0 + k * interval < performance.now() - 1000)
    k = Math.ceil((performance.now() - t0) / interval);
  const at = t0 + (k + i / connections) * interval;
  due[i] = k + 1;
  const wait = at - performance.now();
  if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
  else if (-wait > interval) late++;
}

/**
 * Whether a message sent in window `sentIn` is counted now: sent in the current window, and either before
 * the signal (unpaced: counted at the signal) or, paced, answered after it (offered in the window).
 */
function counts(sentIn: number): boolean {
  return sentIn === window && (!closed || interval > 0);
}

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
        await onSchedule(i);
        if (!running) break;
        const sentIn = window;
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
            if (counts(sentIn)) refused++;
            await conn.say('RSET\r\n');
            continue;
          }
        } else {
          if (!(await conn.say(mailCommand)).startsWith('250')) throw new Error('MAIL refused');
          const rcpt = await conn.say(rcptCommand);
          up = true;
          if (!rcpt.startsWith('250')) {
            if (counts(sentIn)) refused++;
            await conn.say('RSET\r\n');
            continue;
          }
          if (!(await conn.say('DATA\r\n')).startsWith('354')) throw new Error('DATA refused');
        }
        const answer = await conn.say(data);
        if (!counts(sentIn)) continue;
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
  late = 0;
  window++;
  due.fill(0);
  t0 = performance.now();
  cpu0 = process.cpuUsage();
});

const lanes = Array.from({ length: connections }, (_, i) => lane(i));
process.stdout.write(`started ${raw.length}\n`);
process.once('SIGTERM', () => {
  running = false;
  closed = true;
  const seconds = (performance.now() - t0) / 1000;
  // Unpaced, counted at the signal: messages still in flight do not stretch the window. Paced, the messages
  // sent in the window are waited for (the window's length is still the signal's).
  // Its own CPU per message sent: while this stays small, the load generator is not the bottleneck.
  const cpu = process.cpuUsage(cpu0);
  void Promise.allSettled(lanes).then(() => {
    const senderCpuMs = accepted > 0 ? +((cpu.user + cpu.system) / 1000 / accepted).toFixed(2) : null;
    const line = `inbound ${JSON.stringify({ accepted, refused, seconds: +seconds.toFixed(2), senderCpuMs, late })}\n`;
    process.stdout.write(line, () => process.exit(0));
  });
});
