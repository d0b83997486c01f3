import type { Mailroom } from '@mailroom/core';
import { MailroomError } from '@mailroom/core';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { createHandler } from '../handler/handler.js';
import type { HttpOptions, MailroomHttpHandler } from '../handler/http-options.js';
import { payloadTooLarge, unreadableBody, unsupportedMediaType } from '../neutral/http-errors.js';
import type { NeutralRequest, NeutralResponse } from '../neutral/types.js';
import { flattenHeaders } from './node-headers.js';

/** Options of {@link mailroomPlugin}: the engine, where to mount, and the HTTP options. */
export interface MailroomPluginOptions extends HttpOptions {
  /** The engine the routes call. */
  mailroom: Mailroom;
  /**
   * Mount point of the routes (`/api` serves `/api/send/mail`).
   * @default '' (the root)
   */
  prefix?: string;
}

/**
 * Fastify 5 plugin serving the Mailroom routes under `prefix`. The routes live in an encapsulated child
 * context, so the catch-all raw-body parser and error handler they need never touch your own routes.
 *
 * @example
 * await app.register(mailroomPlugin, { mailroom, prefix: '/api', bodyLimit: 5_000_000 });
 */
export const mailroomPlugin = fp(
  async (fastify: FastifyInstance, options: MailroomPluginOptions) => {
    const { mailroom, prefix: givenPrefix = '', ...httpOptions } = options;
    const handle = createHandler(mailroom, httpOptions);
    const prefix = normalizePrefix(givenPrefix);
    // fastify-plugin makes this plugin skip encapsulation, which also drops register's own `prefix`:
    // the child registered here is what mounts the routes and scopes the parser.
    await fastify.register(async (child) => routes(child, handle, prefix !== ''), { prefix });
  },
  { name: '@mailroom/http', fastify: '5.x' },
);

async function routes(child: FastifyInstance, handle: MailroomHttpHandler, prefixed: boolean): Promise<void> {
  // The full mount point, including the prefixes of any context the plugin was registered in.
  const base = child.prefix;
  // Raw bytes for every content type (and none): the handler decides 400, 413 and 415 as under Express.
  child.removeAllContentTypeParsers();
  child.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: handle.bodyLimit }, (_req, body, done) => {
    done(null, body);
  });
  // Errors Fastify raises before the handler runs (body limit, invalid media type) get our envelope.
  child.setErrorHandler((error: FastifyError, request: FastifyRequest, reply: FastifyReply) => {
    send(reply, handle.fail(toNeutral(request, base), translate(error, handle.bodyLimit)));
  });
  const serve = async (request: FastifyRequest, reply: FastifyReply): Promise<void> => {
    send(reply, await handle(toNeutral(request, base)));
  };
  child.all('/*', serve);
  // `/*` does not match the bare prefix (`/api`); without a prefix of ours it would clash with the app's `/`.
  if (prefixed) child.all('/', serve);
}

/** `api/` and `/api/` mount where `/api` does; `/` is the root. */
function normalizePrefix(prefix: string): string {
  const trimmed = prefix.replace(/\/+$/, '');
  return trimmed === '' || trimmed.startsWith('/') ? trimmed : `/${trimmed}`;
}

function toNeutral(request: FastifyRequest, base: string): NeutralRequest {
  const rest = (request.params as Record<string, string | undefined> | undefined)?.['*'];
  const body: unknown = request.body;
  return {
    method: request.method,
    path: `/${rest ?? ''}`,
    headers: flattenHeaders(request.headers),
    body: body instanceof Uint8Array && body.byteLength > 0 ? body : undefined,
    ip: request.ip,
    base,
    query: request.url.includes('?') ? request.url.slice(request.url.indexOf('?') + 1) : '',
  };
}

function send(reply: FastifyReply, out: NeutralResponse): void {
  void reply
    .code(out.status)
    .headers(out.headers)
    .send(out.bytes ? Buffer.from(out.bytes.buffer, out.bytes.byteOffset, out.bytes.byteLength) : out.body);
}

/** Fastify's own body errors, as the errors the handler would have raised for the same request. */
function translate(error: FastifyError, bodyLimit: number): unknown {
  if (error instanceof MailroomError) return error;
  if (error.statusCode === 413) return payloadTooLarge(bodyLimit);
  if (error.statusCode === 415) return unsupportedMediaType();
  if (error.statusCode !== undefined && error.statusCode >= 400 && error.statusCode < 500)
    return unreadableBody();
  return error;
}
