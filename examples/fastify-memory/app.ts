/**
 * Mailroom in a Fastify app on the memory adapters: the HTTP API under `/api`, an in-process worker,
 * and a demo project created at start (memory keeps nothing across restarts).
 */
import type { AddressInfo } from 'node:net';
import { createMailroom, type Mailroom } from '@mailroom/core';
import { mailroomPlugin } from '@mailroom/http/fastify';
import { type MemoryTransport, memoryStore, memoryTransport } from '@mailroom/memory';
import Fastify from 'fastify';

/** A running example app. */
export interface FastifyMemoryApp {
  /** Base URL of the app, for example `http://127.0.0.1:3000`; the API is under `${url}/api`. */
  url: string;
  /** The engine, for admin calls and events. */
  mailroom: Mailroom;
  /** Every delivered message ends up here. */
  transport: MemoryTransport;
  /** The demo project's secret (memory: a new one on every start). */
  secret: string;
  /** Stops taking requests, lets the worker finish its sends, closes the engine. */
  stop(): Promise<void>;
}

/** Starts the app on `port` (0 for any free port) on loopback. */
export async function start(options: { port?: number; host?: string } = {}): Promise<FastifyMemoryApp> {
  const transport = memoryTransport();
  const mailroom = createMailroom({ store: memoryStore(), transport });
  const { project, secret } = await mailroom.admin.createProject({ name: 'Fastify demo' });
  await mailroom.admin.addSender(project.id, { address: 'hello@fastify.example', name: 'Fastify Demo' });
  await mailroom.admin.createTemplate(project.id, {
    ref: 'welcome',
    format: 'html',
    subject: 'Welcome, {{ recipient.firstName | default: "friend" }}',
    source:
      '<p>Hello {{ recipient.firstName | default: "there" }}, your plan is {{ plan | default: "Free" }}.</p>',
  });

  const app = Fastify();
  app.get('/', async () => ({ service: 'fastify-memory example', api: '/api/send/mail' }));
  await app.register(mailroomPlugin, { mailroom, prefix: '/api' });
  await app.listen({ port: options.port ?? 3000, host: options.host ?? '127.0.0.1' });
  mailroom.worker.start();

  const { port } = app.server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    mailroom,
    transport,
    secret,
    async stop() {
      await app.close();
      await mailroom.close();
    },
  };
}
