/**
 * A claiming worker in its own process, for the SQLite multi-process test. Usage:
 * `sqlite-claimer <url> <now-ms>`. Opens the store, prints `ready`, waits for a line on stdin (so that
 * every worker starts claiming at once), then claims and completes deliveries until none is due, and
 * prints the ids it claimed as one JSON array.
 */
import { createInterface } from 'node:readline';
import { setTimeout as sleep } from 'node:timers/promises';
import { sqlStore } from '../../src/index.js';

const [url, nowArg] = process.argv.slice(2);
if (!url || !nowArg) throw new Error('usage: sqlite-claimer <url> <now-ms>');
const now = new Date(Number(nowArg));
const store = sqlStore({ url });
await store.init();
const input = createInterface({ input: process.stdin });
const go = new Promise((resolve) => input.once('line', resolve));
process.stdout.write('ready\n');
await go;
input.close();

const claimed: string[] = [];
for (;;) {
  const batch = await store.claimDeliveries({ now, limit: 50, leaseMs: 600_000 });
  if (batch.length === 0) break;
  const written = await store.completeDeliveries(
    batch.map((delivery) => {
      claimed.push(delivery.id);
      return {
        id: delivery.id,
        leaseToken: delivery.leaseToken,
        outcome: { status: 'sent', sentAt: now, now },
      };
    }),
  );
  const lost = batch.find((_, i) => written[i] !== true);
  if (lost) throw new Error(`lost the lease of ${lost.id}`);
  // A real worker spends time sending between claims. Without this pause, one process on a loaded
  // machine could drain the whole backlog before the other is scheduled (seen in CI at load 15+).
  await sleep(10);
}
await store.close();
process.stdout.write(`${JSON.stringify(claimed)}\n`);
