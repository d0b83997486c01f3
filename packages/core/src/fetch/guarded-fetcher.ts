import { lookup } from 'node:dns/promises';
import type { Readable } from 'node:stream';
import { Agent, type Dispatcher } from 'undici';
import { isMailroomError, MailroomError } from '../base/errors.js';
import type {
  FetchResolver,
  GuardedFetcher,
  GuardedFetcherOptions,
  GuardedPost,
  GuardedPostAnswer,
  GuardedRequest,
  GuardedResponse,
} from './fetch-types.js';
import { checkTarget, createGuardedConnector, parseAllowHost } from './guarded-connector.js';
import { FetchCapError, readBody } from './read-body.js';

/** The defaults of {@link GuardedFetcherOptions}. */
export const FETCH_DEFAULTS = {
  timeoutMs: 30_000,
  maxBytes: 25 * 1024 * 1024,
  maxRedirects: 5,
  rangeBytes: 1024 * 1024,
} as const;

const REDIRECTS = new Set([301, 302, 303, 307, 308]);

// Headers the caller may not set: the connection is the fetcher's business.
const FORBIDDEN_HEADERS = new Set([
  'host',
  'connection',
  'keep-alive',
  'transfer-encoding',
  'upgrade',
  'te',
  'trailer',
  'proxy-authorization',
  'content-length',
]);

const defaultResolver: FetchResolver = async (hostname) => lookup(hostname, { all: true, verbatim: true });

/**
 * The guarded fetcher (docs/architecture.md, invariant 7), on undici: http(s) only; every address of the DNS
 * answer checked (see `refusalOf`) and the socket pinned to the checked address; redirects followed by
 * hand, at most `maxRedirects`, each hop checked again; total time and byte caps, the byte cap applying
 * to the decoded body too. Every refusal is a `MailroomError` with code `FETCH_REFUSED`.
 *
 * @example
 * const fetcher = createGuardedFetcher({ allowHosts: ['127.0.0.1:8080'] });
 * const res = await fetcher.fetch('http://127.0.0.1:8080/report.pdf');
 * const bytes = await res.bytes();
 */
export function createGuardedFetcher(options: GuardedFetcherOptions = {}): GuardedFetcher {
  const resolved = {
    allowHosts: [...(options.allowHosts ?? [])],
    timeoutMs: options.timeoutMs ?? FETCH_DEFAULTS.timeoutMs,
    maxBytes: options.maxBytes ?? FETCH_DEFAULTS.maxBytes,
    maxRedirects: options.maxRedirects ?? FETCH_DEFAULTS.maxRedirects,
    rangeBytes: options.rangeBytes ?? FETCH_DEFAULTS.rangeBytes,
  };
  const policy = {
    allowHosts: new Set(resolved.allowHosts.map(parseAllowHost)),
    resolver: options.resolver ?? defaultResolver,
    connectHook: options.connectHook,
    connectTimeoutMs: Math.min(10_000, resolved.timeoutMs),
  };
  const agent = new Agent({
    connect: createGuardedConnector(policy),
    headersTimeout: resolved.timeoutMs,
    bodyTimeout: resolved.timeoutMs,
  });

  async function fetchUrl(input: string, request: GuardedRequest = {}): Promise<GuardedResponse> {
    const timeoutMs = Math.min(request.timeoutMs ?? resolved.timeoutMs, resolved.timeoutMs);
    const maxBytes = Math.min(request.maxBytes ?? resolved.maxBytes, resolved.maxBytes);
    const headers = requestHeaders(request.headers);
    const controller = new AbortController();
    const timer = setTimeout(
      () => controller.abort(new FetchCapError('time', `took longer than ${timeoutMs} ms`)),
      timeoutMs,
    );
    const done = () => clearTimeout(timer);
    let url = checkUrl(input);
    try {
      for (let hop = 0; ; hop++) {
        const res = await agent.request({
          origin: url.origin,
          path: `${url.pathname}${url.search}`,
          method: request.method ?? 'GET',
          headers,
          signal: controller.signal,
          ...(request.body !== undefined ? { body: request.body } : {}),
        });
        const location = firstHeader(res.headers.location);
        if (REDIRECTS.has(res.statusCode) && location !== undefined && request.method !== 'POST') {
          discard(res.body);
          if (hop >= resolved.maxRedirects) {
            throw new MailroomError(
              'FETCH_REFUSED',
              `Refused to fetch ${redact(input)}: more than ${resolved.maxRedirects} redirects`,
            );
          }
          url = checkUrl(location, url);
          continue;
        }
        return response(res, url, maxBytes, timeoutMs, controller.signal, done);
      }
    } catch (error) {
      done();
      throw fetchFailure(error, url, controller.signal, timeoutMs);
    }
  }

  /**
   * See `GuardedFetcher.post`: a dispatch with a handler that answers at the status line, then reads the
   * body only to keep the connection for the next request: past `maxBytes` (or declared larger), or
   * still coming at the time cap, the connection is dropped instead.
   */
  function post(input: string, request: GuardedPost): Promise<GuardedPostAnswer> {
    const timeoutMs = Math.min(request.timeoutMs ?? resolved.timeoutMs, resolved.timeoutMs);
    const maxBytes = Math.min(request.maxBytes ?? resolved.maxBytes, resolved.maxBytes);
    let url: URL;
    let headers: Record<string, string>;
    try {
      url = checkUrl(input);
      headers = requestHeaders(request.headers);
    } catch (error) {
      return Promise.reject(error);
    }
    return new Promise((resolve, reject) => {
      let bytes = 0;
      let settled = false;
      /** The answer ended, failed or was dropped: nothing more to abort. */
      let ended = false;
      let abort: ((reason: Error) => void) | undefined;
      let timedOut: FetchCapError | undefined;
      const answer = (status: number, location: string | null) => {
        if (settled) return;
        settled = true;
        resolve({ status, location });
      };
      const fail = (error: unknown) => {
        if (settled) return;
        settled = true;
        reject(fetchFailureOf(timedOut ?? error, url, timeoutMs));
      };
      const end = () => {
        ended = true;
        clearTimeout(timer);
      };
      // The time cap covers the answer's body too: a body still trickling at the cap is dropped (the
      // status, answered already, stands), so it holds no connection longer than a silent server.
      const timer = setTimeout(() => {
        timedOut = new FetchCapError('time', `took longer than ${timeoutMs} ms`);
        if (abort) drop(timedOut);
        else fail(timedOut);
      }, timeoutMs);
      const drop = (reason: FetchCapError) => {
        if (ended) return;
        abort?.(reason);
        end();
      };
      agent.dispatch(
        {
          origin: url.origin,
          path: `${url.pathname}${url.search}`,
          method: 'POST',
          headers,
          body: request.body,
          headersTimeout: timeoutMs,
          bodyTimeout: timeoutMs,
        },
        {
          onRequestStart(controller) {
            abort = (reason) => controller.abort(reason);
            if (timedOut) controller.abort(timedOut);
          },
          onResponseStart(_controller, statusCode, headers) {
            // The status is the answer (Standard Webhooks: any 2xx is a success, the body is not read).
            answer(
              statusCode,
              statusCode >= 300 && statusCode < 400 ? (firstHeader(headers.location) ?? null) : null,
            );
            // A body declared larger than the cap is not worth a byte: drop the connection.
            if (Number(firstHeader(headers['content-length'])) > maxBytes) {
              drop(new FetchCapError('bytes', `the answer declares more than ${maxBytes} bytes`));
            }
          },
          onResponseData(_controller, chunk) {
            bytes += chunk.length;
            // Past the cap the answer is not worth its bytes: drop the connection.
            if (bytes > maxBytes) {
              drop(new FetchCapError('bytes', `the answer grew past ${maxBytes} bytes`));
            }
          },
          onResponseEnd() {
            end();
          },
          onResponseError(_controller, error) {
            end();
            fail(error);
          },
        },
      );
    });
  }

  return {
    fetch: fetchUrl,
    post,
    async check(input) {
      const url = checkUrl(input);
      await checkTarget(policy, url.hostname, url.port, url.protocol);
    },
    options: resolved,
    close: () => agent.close(),
  };
}

function response(
  res: Dispatcher.ResponseData,
  url: URL,
  maxBytes: number,
  timeoutMs: number,
  signal: AbortSignal,
  done: () => void,
): GuardedResponse {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(res.headers)) {
    if (value !== undefined) headers[name.toLowerCase()] = Array.isArray(value) ? value.join(', ') : value;
  }
  let consumed = false;
  return {
    status: res.statusCode,
    url: url.href,
    headers,
    async bytes() {
      if (consumed) throw new MailroomError('INTERNAL', 'The body of a response can be read once');
      consumed = true;
      const declared = Number(headers['content-length']);
      try {
        // A declared length past the cap is refused before a byte of the body is read.
        if (headers['content-length'] !== undefined && declared > maxBytes) {
          throw new FetchCapError(
            'bytes',
            `the response declares ${declared} bytes; the limit is ${maxBytes}`,
          );
        }
        return await readBody(res.body, headers['content-encoding'], maxBytes, signal);
      } catch (error) {
        discard(res.body);
        throw fetchFailure(error, url, signal, timeoutMs);
      } finally {
        done();
      }
    },
    cancel() {
      consumed = true;
      discard(res.body);
      done();
    },
  };
}

function checkUrl(input: string, base?: URL): URL {
  let url: URL;
  try {
    url = new URL(input, base);
  } catch {
    throw new MailroomError('FETCH_REFUSED', `Refused to fetch ${redact(input)}: not a valid URL`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new MailroomError('FETCH_REFUSED', `Refused to fetch ${redact(input)}: only http and https URLs`);
  }
  if (url.username !== '' || url.password !== '') {
    throw new MailroomError('FETCH_REFUSED', `Refused to fetch ${redact(input)}: credentials in the URL`);
  }
  url.hash = '';
  return url;
}

function requestHeaders(given: Record<string, string> | undefined): Record<string, string> {
  const headers: Record<string, string> = { 'user-agent': 'Mailroom', 'accept-encoding': 'identity' };
  for (const [name, value] of Object.entries(given ?? {})) {
    const key = name.toLowerCase();
    if (FORBIDDEN_HEADERS.has(key) || /[\r\n\0]/.test(value)) {
      throw new MailroomError('INTERNAL', `Header ${name} cannot be set on a guarded fetch`);
    }
    headers[key] = value;
  }
  return headers;
}

// Destroying an undici body makes it emit an abort error: expected here, so it must not go unhandled.
function discard(body: Readable): void {
  body.on('error', () => {});
  body.destroy();
}

function firstHeader(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

function fetchFailure(error: unknown, url: URL, signal: AbortSignal, timeoutMs: number): MailroomError {
  if (isMailroomError(error)) return error;
  return fetchFailureOf(
    signal.aborted && signal.reason instanceof FetchCapError ? signal.reason : error,
    url,
    timeoutMs,
  );
}

/** undici's own header and body timeouts (set to the same cap, as a backstop): the time cap too. */
const UNDICI_TIMEOUTS = new Set(['UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT']);

/**
 * The `FETCH_REFUSED` error of a failed fetch of `url`: `error` is what failed, or the cap it hit. Which
 * of our timer and undici's fires first on the same cap is a race (a busy event loop delays ours): both
 * read as the time cap.
 */
function fetchFailureOf(error: unknown, url: URL, timeoutMs: number): MailroomError {
  if (isMailroomError(error)) return error;
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code === 'string' && UNDICI_TIMEOUTS.has(code)) {
    return fetchFailureOf(new FetchCapError('time', `took longer than ${timeoutMs} ms`), url, timeoutMs);
  }
  if (error instanceof FetchCapError) {
    return new MailroomError('FETCH_REFUSED', `Fetch of ${redact(url.href)} stopped: ${error.message}`, {
      cause: error,
      retryable: error.cap === 'time',
    });
  }
  const message = error instanceof Error ? error.message : String(error);
  return new MailroomError('FETCH_REFUSED', `Could not fetch ${redact(url.href)}: ${message}`, {
    cause: error,
    retryable: true,
  });
}

// Query strings may carry signatures (pre-signed S3 links): never put them in an error message.
function redact(input: string): string {
  const q = input.search(/[?#]/);
  return q === -1 ? input : `${input.slice(0, q)}?…`;
}
