/**
 * A minimal SMTP sink for the delivery benchmarks, meant to run in its own process (so its CPU is not
 * the sender's): listens on 127.0.0.1 (random port), counts the messages it accepts and discards them.
 * It also counts Message-IDs seen twice (a message delivered twice), from the header of each message.
 * Prints `port <n>` on stdout; over IPC answers `'count'` with the number accepted, the duplicates and
 * the CPU time the sink has used (so a benchmark can tell the sink's share of the machine), `'reset'` by
 * zeroing them, and `'sample'` with the first message accepted since the last reset, raw (so a benchmark
 * can check what it measured, e.g. that links were tracked). BENCH_SINK_DELAY_MS (0): answer each message
 * that long after it arrived, as a real relay answers in tens of milliseconds (the connection waits).
 */
import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';

const MESSAGE_ID = /^message-id:[ \t]*(\S+)/im;
const DELAY_MS = Number(process.env.BENCH_SINK_DELAY_MS ?? 0);

let count = 0;
let duplicates = 0;
let seen = new Set<string>();
/** The first message since the last reset, raw (latin1), kept whole up to 1 MiB. */
let sample: string | null = null;
const server = new SMTPServer({
  disabledCommands: ['STARTTLS', 'AUTH'],
  authOptional: true,
  logger: false,
  onData(stream, _session, callback) {
    let head = '';
    let headDone = false;
    const keep: Buffer[] | null = sample === null ? [] : null;
    stream.on('data', (chunk: Buffer) => {
      keep?.push(chunk);
      if (headDone) return;
      head += chunk.toString('latin1', 0, Math.min(chunk.length, 16_384));
      const end = head.indexOf('\r\n\r\n');
      if (end >= 0 || head.length > 65_536) {
        headDone = true;
        const id = MESSAGE_ID.exec(end >= 0 ? head.slice(0, end) : head)?.[1];
        if (id !== undefined) {
          if (seen.has(id)) duplicates++;
          else seen.add(id);
        }
      }
    });
    stream.on('end', () => {
      if (keep && sample === null) sample = Buffer.concat(keep).toString('latin1', 0, 1 << 20);
      if (DELAY_MS === 0) {
        count++;
        callback(null, 'Ok');
        return;
      }
      setTimeout(() => {
        count++;
        callback(null, 'Ok');
      }, DELAY_MS);
    });
  },
});
server.on('error', () => {});
server.listen(0, '127.0.0.1', () => {
  process.stdout.write(`port ${(server.server.address() as AddressInfo).port}\n`);
});
process.on('message', (message) => {
  const { user, system } = process.cpuUsage();
  if (message === 'reset') {
    count = 0;
    duplicates = 0;
    seen = new Set();
    sample = null;
  }
  if (message === 'sample') process.send?.({ sample });
  if (message === 'count' || message === 'reset') {
    process.send?.({ count, duplicates, cpuMicros: user + system });
  }
});
process.on('disconnect', () => server.close(() => process.exit(0)));
