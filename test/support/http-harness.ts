/**
 * The HTTP adapter mounted as an app would mount it, on 127.0.0.1 with a free port, through either binder,
 * and one JSON call as a client makes it: what the route tests of both binders share.
 */
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Mailroom } from '@mailroom/core';
import type { HttpOptions } from '@mailroom/http';
import { mailroomRouter } from '@mailroom/http/express';
import { mailroomPlugin } from '@mailroom/http/fastify';
import express from 'express';
import Fastify from 'fastify';

/** The two web frameworks the HTTP adapter binds to. */
export type Binder = 'express' | 'fastify';

/** A mounted adapter: its base URL (with the prefix) and how to stop it. */
export interface Listening {
  url: string;
  close(): Promise<void>;
}

/** Mounts the adapter for `mailroom` under `prefix` with `binder`, listening on 127.0.0.1. */
export async function listenMailroom(
  binder: Binder,
  mailroom: Mailroom,
  options: HttpOptions = {},
  prefix = '/v1',
): Promise<Listening> {
  if (binder === 'express') {
    const app = express();
    app.use(prefix, mailroomRouter(mailroom, options));
    const server = await new Promise<Server>((resolve, reject) => {
      const s = app.listen(0, '127.0.0.1', (error?: Error) => (error ? reject(error) : resolve(s)));
    });
    return {
      url: `http://127.0.0.1:${(server.address() as AddressInfo).port}${prefix}`,
      close: () =>
        new Promise<void>((resolve) => {
          server.closeAllConnections();
          server.close(() => resolve());
        }),
    };
  }
  const app = Fastify();
  await app.register(mailroomPlugin, { prefix, mailroom, ...options });
  await app.listen({ port: 0, host: '127.0.0.1' });
  return {
    url: `http://127.0.0.1:${(app.server.address() as AddressInfo).port}${prefix}`,
    close: () => app.close(),
  };
}

/** One answer of the API: status, headers, the raw text and its JSON. */
export interface ApiAnswer<J> {
  status: number;
  headers: Headers;
  text: string;
  json: J;
}

/**
 * Calls `method path` under `base` with a bearer key (none when `auth` is null) and a JSON body (a string
 * is sent as it is, for malformed bodies), and parses the JSON answer.
 */
export async function callApi<J = Record<string, unknown>>(
  base: string,
  method: string,
  path: string,
  body?: unknown,
  auth?: string | null,
): Promise<ApiAnswer<J>> {
  const headers: Record<string, string> = {};
  if (auth) headers.authorization = `Bearer ${auth}`;
  if (body !== undefined) headers['content-type'] = 'application/json';
  const res = await fetch(`${base}${path}`, {
    method,
    headers,
    ...(body === undefined ? {} : { body: typeof body === 'string' ? body : JSON.stringify(body) }),
  });
  const text = await res.text();
  return { status: res.status, headers: res.headers, text, json: JSON.parse(text) as J };
}
