import type { Mailroom } from '@mailroom/core';
import express, { type Request, type Response, type Router } from 'express';
import { createHandler } from '../handler/handler.js';
import type { HttpOptions, MailroomHttpHandler } from '../handler/http-options.js';
import { unreadableBody } from '../neutral/http-errors.js';
import type { NeutralRequest, NeutralResponse } from '../neutral/types.js';
import { flattenHeaders } from './node-headers.js';
import { readRequestBody } from './read-request-body.js';

/**
 * An Express 5 router serving the Mailroom routes below wherever it is mounted. It reads the raw body
 * itself (no `express.json()` needed) and answers every path under its mount point, unknown ones with a
 * JSON 404, so mount it under a prefix or after your own routes.
 *
 * @example
 * app.use('/api', mailroomRouter(mailroom, { rateLimit: { perProjectPerSecond: 20 } }));
 */
export function mailroomRouter(mailroom: Mailroom, options: HttpOptions = {}): Router {
  const handle = createHandler(mailroom, options);
  const router = express.Router();
  router.use((req: Request, res: Response) => {
    void serve(handle, req, res);
  });
  return router;
}

async function serve(handle: MailroomHttpHandler, req: Request, res: Response): Promise<void> {
  const neutral: NeutralRequest = {
    method: req.method,
    path: req.path,
    headers: flattenHeaders(req.headers),
    body: undefined,
    base: req.baseUrl,
    query: queryString(req.originalUrl),
  };
  if (req.ip !== undefined) neutral.ip = req.ip;
  let out: NeutralResponse;
  try {
    neutral.body = await collectBody(req, handle.bodyLimit);
    out = await handle(neutral);
  } catch {
    // The client went away mid-body: nobody is left to answer.
    if (req.destroyed && res.destroyed) return;
    out = handle.fail(neutral, unreadableBody());
  }
  if (res.headersSent) return;
  res.writeHead(out.status, out.headers);
  res.end(out.bytes ?? out.body);
}

/** The part of a URL after `?`. */
function queryString(url: string): string {
  const at = url.indexOf('?');
  return at < 0 ? '' : url.slice(at + 1);
}

/** The raw body; if a body parser mounted earlier already drained the stream, what it left on `req.body`. */
async function collectBody(req: Request, limit: number): Promise<Uint8Array | undefined> {
  const declared = Number(req.headers['content-length']);
  // Refused on the declared length before a byte is read; the handler answers 413.
  if (Number.isFinite(declared) && declared > limit) return undefined;
  if (!req.readableEnded) return readRequestBody(req, limit);
  const parsed: unknown = req.body;
  if (parsed === undefined) return undefined;
  if (parsed instanceof Uint8Array) return parsed;
  return Buffer.from(typeof parsed === 'string' ? parsed : JSON.stringify(parsed));
}
