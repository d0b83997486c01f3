/**
 * A webhook receiver for the delivery benchmark, in its own process (so its CPU is not the sender's):
 * listens on 127.0.0.1 (random port), answers 204 to every POST and counts the distinct `webhook-id`s
 * it got (and every request). Prints `port <n>`; over IPC answers `'count'` and `'reset'` like
 * `count-sink.ts`. It does not verify signatures (the tests do, with `standardwebhooks`): the benchmark
 * measures the sender.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

let ids = new Set<string>();
let requests = 0;
const server = createServer((req, res) => {
  const id = req.headers['webhook-id'];
  req.resume();
  req.on('end', () => {
    requests++;
    if (typeof id === 'string') ids.add(id);
    res.writeHead(204);
    res.end();
  });
});
server.keepAliveTimeout = 60_000;
server.listen(0, '127.0.0.1', () => {
  process.stdout.write(`port ${(server.address() as AddressInfo).port}\n`);
});
process.on('message', (message) => {
  if (message === 'reset') {
    ids = new Set();
    requests = 0;
  }
  const { user, system } = process.cpuUsage();
  process.send?.({ count: ids.size, requests, cpuMicros: user + system });
});
process.on('disconnect', () => {
  server.closeAllConnections();
  server.close(() => process.exit(0));
});
