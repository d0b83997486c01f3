/**
 * Mailroom in an Express app: the HTTP API under `/api`, a SQLite file as the store, SMTP delivery to
 * `smtpUrl` (or `.eml` files in an outbox folder when there is none), and an in-process worker.
 */
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createMailroom, type Mailroom, type Transport } from '@mailroom/core';
import { mailroomRouter } from '@mailroom/http/express';
import { outboxTransport, smtpTransport } from '@mailroom/smtp';
import { sqlStore } from '@mailroom/sql';
import express from 'express';

/** Options of {@link start}. */
export interface ExpressSqliteOptions {
  /** @default 3000 (0 for any free port) */
  port?: number;
  /** The SQLite file. @default 'mailroom.db' */
  databaseFile?: string;
  /** `smtp://user:pass@host:587`; when absent, messages are written to `outboxDir`. */
  smtpUrl?: string;
  /** @default '.mailroom/outbox' */
  outboxDir?: string;
}

/** A running example app. */
export interface ExpressSqliteApp {
  /** Base URL of the app; the API is under `${url}/api`. */
  url: string;
  /** The engine, for admin calls and events. */
  mailroom: Mailroom;
  /** The secret of the project created on a new database; undefined when the database had one already. */
  secret: string | undefined;
  /** Stops taking requests, lets the worker finish its sends, closes the engine. */
  stop(): Promise<void>;
}

/** Starts the app on loopback. */
export async function start(options: ExpressSqliteOptions = {}): Promise<ExpressSqliteApp> {
  const store = sqlStore({ url: options.databaseFile ?? 'mailroom.db' });
  const transport: Transport = options.smtpUrl
    ? smtpTransport(options.smtpUrl)
    : outboxTransport({ dir: options.outboxDir ?? '.mailroom/outbox' });
  const mailroom = createMailroom({ store, transport });
  await store.init();
  await transport.verify?.();

  // A new database gets a project, a sender and a template; the secret exists only now, so print it now.
  let secret: string | undefined;
  if ((await store.listProjects()).length === 0) {
    const created = await mailroom.admin.createProject({ name: 'Express demo' });
    secret = created.secret;
    await mailroom.admin.addSender(created.project.id, {
      address: 'hello@express.example',
      name: 'Express Demo',
    });
    await mailroom.admin.createTemplate(created.project.id, {
      ref: 'receipt',
      format: 'html',
      subject: 'Your receipt, {{ recipient.firstName | default: "friend" }}',
      source: '<p>Thanks {{ recipient.firstName | default: "there" }}! Order {{ order }} is on its way.</p>',
    });
  }

  const app = express();
  app.get('/', (_req, res) => {
    res.json({ service: 'express-sqlite example', api: '/api/send/mail' });
  });
  app.use('/api', mailroomRouter(mailroom));
  const server = await new Promise<Server>((resolve, reject) => {
    const listening = app.listen(options.port ?? 3000, '127.0.0.1', (error?: Error) =>
      error ? reject(error) : resolve(listening),
    );
  });
  mailroom.worker.start();

  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    mailroom,
    secret,
    async stop() {
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await mailroom.close();
    },
  };
}
