/**
 * A delivery worker in its own process with the reputation guard's options given: `node <bundle>
 * <database-url> <smtp-port> <guard-json>`, the bundle being `childEntry('test/support/guard-worker.ts')`
 * (child-bundle.ts; `node --import tsx --conditions=mailroom-source` runs this file as well).
 * Runs the engine's worker (defaults: no rate limit) against the database, sending through
 * `smtpTransport` to 127.0.0.1:<smtp-port>; prints `started` once running; SIGTERM stops it cleanly.
 */
import { createMailroom, type ReputationGuardOptions } from '@mailroom/core';
import { smtpTransport } from '@mailroom/smtp';
import { sqlStore } from '@mailroom/sql';

const [url, port, guard] = process.argv.slice(2);
if (!url || !port || !guard) throw new Error('usage: guard-worker <database-url> <smtp-port> <guard-json>');

const mailroom = createMailroom({
  store: sqlStore({ url, poolSize: 4 }),
  transport: smtpTransport({ host: '127.0.0.1', port: Number(port) }),
  guard: JSON.parse(guard) as ReputationGuardOptions,
  logger: {
    debug() {},
    info() {},
    warn() {},
    error(obj, msg) {
      process.stderr.write(
        `${msg ?? ''} ${JSON.stringify(obj, (_k, v: unknown) => (v instanceof Error ? v.message : v))}\n`,
      );
    },
  },
});
process.on('SIGTERM', () => {
  mailroom.close().then(
    () => process.exit(0),
    () => process.exit(1),
  );
});
mailroom.worker.start();
process.stdout.write('started\n');
