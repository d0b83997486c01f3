/**
 * A delivery worker in its own process, for the crash tests (crash-harness.ts starts it bundled, see
 * child-bundle.ts). Usage from the sources:
 * `node --import tsx --conditions=mailroom-source test/support/crash-worker.ts <database-url> <smtp-port>
 * <batch-size> <lease-ms>`. Runs the engine's worker against the database, sending through
 * `smtpTransport` to 127.0.0.1:<smtp-port>; prints `started` once running and `completed <ref>` when a
 * mailing completes; SIGTERM stops it cleanly. The tests kill it with SIGKILL, mid-send. The webhook
 * sender runs too, with the same lease; `CRASH_ALLOW_HOSTS` (comma-separated `HOST:PORT`) allow-lists a
 * loopback webhook receiver. `CRASH_AUTOMATIONS=1` claims automation runs with the same lease, every 50 ms.
 */
import { createMailroom } from '@mailroom/core';
import { smtpTransport } from '@mailroom/smtp';
import { sqlStore } from '@mailroom/sql';

const [url, port, batchSize, leaseMs] = process.argv.slice(2);
if (!url || !port || !batchSize || !leaseMs) {
  throw new Error('usage: crash-worker <database-url> <smtp-port> <batch-size> <lease-ms>');
}

const mailroom = createMailroom({
  store: sqlStore({ url, poolSize: 4 }),
  transport: smtpTransport({ host: '127.0.0.1', port: Number(port), maxConnections: 4 }),
  worker: { batchSize: Number(batchSize), leaseMs: Number(leaseMs), concurrency: 8, pollMs: 50 },
  webhooks: { leaseMs: Number(leaseMs), pollMs: 50 },
  // Automation runs (issue 39) with the same lease, polled often, only when the test asks for it.
  ...(process.env.CRASH_AUTOMATIONS ? { automations: { leaseMs: Number(leaseMs), pollMs: 50 } } : {}),
  fetch: { allowHosts: (process.env.CRASH_ALLOW_HOSTS ?? '').split(',').filter((h) => h !== '') },
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
mailroom.on('broadcast:completed', ({ ref }) => process.stdout.write(`completed ${ref}\n`));
process.on('SIGTERM', () => {
  mailroom.close().then(
    () => process.exit(0),
    () => process.exit(1),
  );
});
mailroom.worker.start();
process.stdout.write('started\n');
