/**
 * A minimal SMTP sink for the delivery benchmarks, meant to run in its own process (so its CPU is not
 * the sender's): listens on 127.0.0.1 (random port), counts the messages it accepts and discards them.
 * Prints `port <n>` on stdout; over IPC answers `'count'` with the number accepted (and the CPU time the
 * sink has used, so a benchmark can tell the sink's share of the machine) and `'reset'` by zeroing it.
 */
import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';

let count = 0;
const server = new SMTPServer({
  disabledCommands: ['STARTTLS', 'AUTH'],
  authOptional: true,
  logger: false,
  onData(stream, _session, callback) {
    stream.on('end', () => {
      count++;
      callback(null, 'Ok');
    });
    stream.resume();
  },
});
server.on('error', () => {});
server.listen(0, '127.0.0.1', () => {
  process.stdout.write(`port ${(server.server.address() as AddressInfo).port}\n`);
});
process.on('message', (message) => {
  const { user, system } = process.cpuUsage();
  if (message === 'count') process.send?.({ count, cpuMicros: user + system });
  if (message === 'reset') {
    count = 0;
    process.send?.({ count, cpuMicros: user + system });
  }
});
process.on('disconnect', () => server.close(() => process.exit(0)));
