/**
 * The abuse of `bench/inbound-abuse.ts`, in a process of its own (so that its CPU is not the sender's):
 * `node --import tsx inbound-abuser.ts <port> <domain>` against an inbound listener on 127.0.0.1 holds
 * idle connections from 127.0.0.2 and 127.0.0.3 (ten each, re-opened when dropped), sends forged
 * return-path tokens on two connections (from 127.0.0.7 and .8) at a fixed rate each, and a message with
 * 100,000 header lines every second. The forged rate is argv[4] messages a second per connection (100 by
 * default: what one address may sustain under the listener's default `maxMessagesPerMinute`, 6000);
 * 0 sends them as fast as they are answered. A forged recipient refused at RCPT is followed by RSET, as
 * a real client does, not by its data. On SIGTERM it prints one line `abuse <json>` with its counts and
 * exits.
 */
import { connect, type Socket } from 'node:net';

const port = Number(process.argv[2]);
const domain = process.argv[3] as string;
const forgedRate = Number(process.argv[4] ?? 100);
const counts = {
  idleOpened: 0,
  idleRefused: 0,
  forged: 0,
  forgedOk: 0,
  forgedRefusedAtRcpt: 0,
  headerFloods: 0,
  header552: 0,
};
let stopping = false;

/** A minimal line client: send, then resolve with the next complete reply. */
function client(
  localAddress: string,
): Promise<{ socket: Socket; say: (data: string | Buffer) => Promise<string>; greeting: string }> {
  return new Promise((resolve, reject) => {
    const socket = connect({ port, host: '127.0.0.1', localAddress });
    let buffer = '';
    let waiter: ((reply: string) => void) | undefined;
    const check = () => {
      if (waiter && /(^|\r\n)\d{3} [^\r\n]*\r\n$/.test(buffer)) {
        const reply = buffer;
        buffer = '';
        const wake = waiter;
        waiter = undefined;
        wake(reply);
      }
    };
    socket.on('data', (chunk) => {
      buffer += chunk.toString('latin1');
      check();
    });
    socket.on('error', () => {});
    socket.once('close', () => waiter?.(''));
    const next = () =>
      new Promise<string>((r) => {
        waiter = r;
        check();
      });
    next().then(
      (greeting) =>
        resolve({
          socket,
          greeting,
          say: (data) => {
            const reply = next();
            socket.write(typeof data === 'string' ? `${data}\r\n` : data);
            return reply;
          },
        }),
      reject,
    );
  });
}

async function idle(from: string): Promise<void> {
  while (!stopping) {
    const c = await client(from).catch(() => undefined);
    if (!c) continue;
    if (c.greeting.startsWith('220')) counts.idleOpened++;
    else counts.idleRefused++;
    // Never sends: waits until the server drops it (idle timeout) or the run ends.
    await new Promise((resolve) => c.socket.once('close', resolve));
    if (!stopping) await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

async function message(c: Awaited<ReturnType<typeof client>>, to: string, data: Buffer): Promise<string> {
  await c.say('MAIL FROM:<>');
  const rcpt = await c.say(`RCPT TO:<${to}>`);
  if (!rcpt.startsWith('250')) {
    await c.say('RSET');
    return rcpt;
  }
  await c.say('DATA');
  return c.say(Buffer.concat([data, Buffer.from('\r\n.\r\n')]));
}

const DSN = Buffer.from(
  'From: MAILER-DAEMON@mx.example\r\nSubject: Undelivered Mail Returned to Sender\r\nContent-Type: text/plain\r\n\r\n550 5.1.1 no such user\r\n',
);

async function forged(from: string, n: number): Promise<void> {
  const c = await client(from);
  await c.say('EHLO flood.example');
  const t0 = performance.now();
  for (let i = 0; !stopping; i++) {
    // At a fixed rate: message i is due at t0 + i / rate (never ahead of it; behind, at once).
    if (forgedRate > 0) {
      const wait = t0 + (i * 1000) / forgedRate - performance.now();
      if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
    }
    const reply = await message(c, `b+dlv_forged${n}x${i}-0123456789abcdef@${domain}`, DSN);
    counts.forged++;
    if (reply.startsWith('250')) counts.forgedOk++;
    else if (reply.startsWith('550')) counts.forgedRefusedAtRcpt++;
  }
  c.socket.destroy();
}

const HEADERS = Buffer.concat([Buffer.from('X-Flood: 1\r\n'.repeat(100_000)), Buffer.from('\r\nhi')]);

async function headerFloods(): Promise<void> {
  while (!stopping) {
    const c = await client('127.0.0.9');
    await c.say('EHLO flood.example');
    const reply = await message(c, `fbl@${domain}`, HEADERS);
    counts.headerFloods++;
    if (reply.startsWith('552')) counts.header552++;
    c.socket.destroy();
    await new Promise((resolve) => setTimeout(resolve, 1000));
  }
}

for (const from of ['127.0.0.2', '127.0.0.3']) for (let i = 0; i < 10; i++) void idle(from);
void forged('127.0.0.7', 0);
void forged('127.0.0.8', 1);
void headerFloods();
process.stdout.write('started\n');
process.on('SIGTERM', () => {
  stopping = true;
  process.stdout.write(`abuse ${JSON.stringify(counts)}\n`);
  process.exit(0);
});
