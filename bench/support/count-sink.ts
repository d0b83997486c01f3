/**
 * A minimal SMTP sink for the delivery benchmarks, meant to run in its own process (so its CPU is not
 * the sender's): listens on 127.0.0.1 (random port), counts the messages it accepts and discards them.
 * It also counts Message-IDs seen twice (a message delivered twice), from the header of each message.
 * Prints `port <n>` on stdout; over IPC answers `'count'` with the number accepted, the duplicates and
 * the CPU time the sink has used (so a benchmark can tell the sink's share of the machine), and
 * `'reset'` by zeroing them.
 */
import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';

const MESSAGE_ID = /^message-id:[ \t]*(\S+)/im;

let count = 0;
let duplicates = 0;
let seen = new Set<string>();
const server = new SMTPServer({
  disabledCommands: ['STARTTLS', 'AUTH'],
  authOptional: true,
  logger: false,
  onData(stream, _session, callback) {
    let head = '';
    let headDone = false;
    stream.on('data', (chunk: Buffer) => {
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
      count++;
      callback(null, 'Ok');
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
  }
  if (message === 'count' || message === 'reset') {
    process.send?.({ count, duplicates, cpuMicros: user + system });
  }
});
process.on('disconnect', () => server.close(() => process.exit(0)));
