/**
 * An app process for the crash test of sending inside the app's transaction. Usage:
 * `node --import tsx --conditions=mailroom-source test/support/app-transaction-child.ts <kind> <url> <secret>
 * <order id> <customer> <commit|before-commit>`. Opens the app's database and the store on it (as
 * `app-database.ts` does), then in one transaction inserts the order and sends its receipt; with `commit` it
 * commits, prints `committed` and kills itself with SIGKILL at once; with `before-commit` it prints `sent`
 * and kills itself with SIGKILL while the transaction is still open. It runs no worker: delivery is the
 * restarted process's.
 */
import { createMailroom } from '@mailroom/core';
import { memoryTransport } from '@mailroom/memory';
import { type AppKind, openAppDatabase } from './app-database.js';

const [kind, url, secret, order, customer, mode] = process.argv.slice(2);
if (!kind || !url || !secret || !order || !customer || (mode !== 'commit' && mode !== 'before-commit')) {
  throw new Error(
    'usage: app-transaction-child <kind> <url> <secret> <order> <customer> <commit|before-commit>',
  );
}

const app = await openAppDatabase(kind as AppKind, url, 2);
const mailroom = createMailroom({ store: app.store, transport: memoryTransport() });
await app.db.transaction().execute(async (tx) => {
  await tx.insertInto('app_orders').values({ id: order, customer }).execute();
  const body = {
    subject: `Order ${order}`,
    sender: 'shop@acme.test',
    message: '<p>Thanks</p>',
    recipients: customer,
  };
  const { ref } = await mailroom.send(secret, body, { transaction: tx });
  if (mode === 'before-commit') {
    process.stdout.write(`sent ${ref}\n`, () => process.kill(process.pid, 'SIGKILL'));
    await new Promise(() => undefined);
  }
});
process.stdout.write('committed\n', () => process.kill(process.pid, 'SIGKILL'));
