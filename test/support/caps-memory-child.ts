/**
 * The server side of `test/request-caps-http.test.ts`, in a process of its own so that its heap is the
 * server's alone: one engine (memory adapters) behind the Express router and the Fastify plugin on
 * 127.0.0.1. Prints one line `ready <json>` with both base URLs and the project secret; over IPC answers
 * `'heap'` with the heap in use after full collections (it runs with --expose-gc), and `'mailings'` with
 * the number of mailings the store holds. Exits when its parent disconnects.
 */
import type { AddressInfo } from 'node:net';
import { createMailroom } from '@mailroom/core';
import { mailroomRouter } from '@mailroom/http/express';
import { mailroomPlugin } from '@mailroom/http/fastify';
import { memoryStore, memoryTransport } from '@mailroom/memory';
import express from 'express';
import Fastify from 'fastify';

const store = memoryStore();
const mailroom = createMailroom({ store, transport: memoryTransport() });
const { project, secret } = await mailroom.admin.createProject({ name: 'Caps' });
await mailroom.admin.addSender(project.id, { address: 'noreply@acme.test', name: 'Acme' });
await mailroom.admin.createTemplate(project.id, {
  ref: 'welcome',
  format: 'html',
  source: '<p>Hello {{ name }}</p>',
  subject: 'Welcome',
});

const app = express();
app.use('/api', mailroomRouter(mailroom));
const server = await new Promise<ReturnType<typeof app.listen>>((resolve, reject) => {
  const s = app.listen(0, '127.0.0.1', (error?: Error) => (error ? reject(error) : resolve(s)));
});
const fastify = Fastify();
await fastify.register(mailroomPlugin, { mailroom, prefix: '/api' });
await fastify.listen({ host: '127.0.0.1', port: 0 });

const urlOf = (address: AddressInfo) => `http://127.0.0.1:${address.port}/api`;
const ready = {
  express: urlOf(server.address() as AddressInfo),
  fastify: urlOf(fastify.server.address() as AddressInfo),
  secret,
  projectId: project.id,
};
process.stdout.write(`ready ${JSON.stringify(ready)}\n`);

const gc = (globalThis as { gc?: () => void }).gc;
async function settledHeap(): Promise<number> {
  if (!gc) throw new Error('run with --expose-gc');
  // Several rounds, letting sockets and timers finish between them, so that what is left is what is held.
  for (let i = 0; i < 4; i++) {
    gc();
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return process.memoryUsage().heapUsed;
}

process.on('message', (message) => {
  if (message === 'heap') void settledHeap().then((heapUsed) => process.send?.({ heapUsed }));
  if (message === 'mailings') {
    void Promise.all([
      store.listMailings(project.id, 'message', { limit: 10_000 }),
      store.listMailings(project.id, 'broadcast', { limit: 10_000 }),
    ]).then(([messages, broadcasts]) => process.send?.({ mailings: messages.length + broadcasts.length }));
  }
});
process.on('disconnect', () => {
  server.closeAllConnections();
  server.close();
  void fastify.close().then(() => process.exit(0));
});
