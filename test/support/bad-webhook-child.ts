/**
 * The misbehaving webhook endpoints of `bad-webhook-endpoints.ts` in a process of their own (so that
 * their CPU is not the sender's): started with the options given as JSON in argv[2], prints one line
 * `endpoints <json>` with their URLs and hosts, and over IPC answers `'stats'` with their counters.
 * Exits when its parent disconnects.
 */
import { type BadEndpoint, startBadEndpoints } from './bad-webhook-endpoints.js';

const bad = await startBadEndpoints(JSON.parse(process.argv[2] ?? '{}'));
const named = {
  hanging: bad.hanging,
  slow: bad.slow,
  big: bad.big,
  redirect: bad.redirect,
  forbidden: bad.forbidden,
};
const counters = (e: BadEndpoint) => ({
  url: e.url,
  host: e.host,
  requests: e.requests,
  open: e.open,
  maxOpen: e.maxOpen,
  connections: e.connections,
});
const stats = () => ({
  ...Object.fromEntries(Object.entries(named).map(([name, e]) => [name, counters(e)])),
  written: bad.big.written,
  cpuMicros: process.cpuUsage().user + process.cpuUsage().system,
});
process.stdout.write(`endpoints ${JSON.stringify(stats())}\n`);
process.on('message', (message) => {
  if (message === 'stats') process.send?.(stats());
});
process.on('disconnect', () => {
  void bad.close().then(() => process.exit(0));
});
