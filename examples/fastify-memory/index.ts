/**
 * Run: npx pnpm@10 --filter @mailroom/example-fastify-memory start   (PORT=3000 by default)
 */
import { start } from './app.js';

const app = await start({ port: Number(process.env.PORT ?? 3000) });
app.mailroom.on('delivery', (e) => console.log(`delivery ${e.mailingRef} -> ${e.address}: ${e.status}`));

console.log(`Listening on ${app.url}; project secret (memory: new on every start): ${app.secret}`);
console.log(`Try:
  curl -s ${app.url}/api/send/mail -H "Authorization: Bearer ${app.secret}" -H "Content-Type: application/json" \\
    -d '{"subject":"Hi {{ recipient.firstName }}","sender":"hello@fastify.example","template":{"ref":"welcome"},"recipients":[{"address":"ada@example.test","name":"Ada Lovelace"}]}'`);

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    void app
      .stop()
      .then(() => console.log(`stopped; ${app.transport.outbox.length} messages were delivered to memory`));
  });
}
