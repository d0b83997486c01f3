/**
 * Run: npx pnpm@10 --filter @mailroom/example-express-sqlite start
 * Environment: PORT (3000), MAILROOM_SMTP_URL (unset: .eml files in ./.mailroom/outbox), DATABASE_FILE (mailroom.db).
 */
import { start } from './app.js';

const app = await start({
  port: Number(process.env.PORT ?? 3000),
  databaseFile: process.env.DATABASE_FILE ?? 'mailroom.db',
  ...(process.env.MAILROOM_SMTP_URL ? { smtpUrl: process.env.MAILROOM_SMTP_URL } : {}),
});

console.log(`Listening on ${app.url} (API under /api)`);
if (app.secret) {
  console.log(`New database: project secret, shown only this once: ${app.secret}`);
  console.log(`Try:
  curl -s ${app.url}/api/send/mail -H "Authorization: Bearer ${app.secret}" -H "Content-Type: application/json" \\
    -d '{"sender":"hello@express.example","subject":"Receipt","template":{"ref":"receipt","variables":{"order":"A-1001"}},"recipients":[{"address":"ada@example.test","name":"Ada Lovelace"}]}'`);
}
console.log(
  process.env.MAILROOM_SMTP_URL
    ? 'Delivering through MAILROOM_SMTP_URL'
    : 'Writing messages to ./.mailroom/outbox',
);

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    void app.stop().then(() => console.log('stopped'));
  });
}
