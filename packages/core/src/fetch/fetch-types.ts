/** One address a host name resolves to. */
export interface ResolvedAddress {
  /** An IP literal: dotted-decimal IPv4 or IPv6 without brackets. */
  address: string;
  family: 4 | 6 | number;
}

/** Resolves a host name to all of its addresses (the default is `dns.promises.lookup` with `all: true`). */
export type FetchResolver = (hostname: string) => Promise<ResolvedAddress[]>;

/** The connection the guarded fetcher is about to open, after every check passed. */
export interface ConnectTarget {
  /** The host name of the URL (brackets of an IPv6 literal removed). */
  hostname: string;
  /** The checked address the socket is pinned to. */
  address: string;
  family: number;
  port: number;
  protocol: 'http:' | 'https:';
  /** Whether the host was let through by `allowHosts` rather than by the address checks. */
  allowListed: boolean;
}

/** Options of {@link createGuardedFetcher}. */
export interface GuardedFetcherOptions {
  /**
   * Hosts let through without the address checks, as exact `host:port` (for example `127.0.0.1:8080`,
   * `[::1]:8080`, `files.internal:443`). For tests and trusted internal hosts; a redirect to a host not
   * listed is checked as usual. @default []
   */
  allowHosts?: string[];
  /** DNS resolution; tests inject one that maps test names to chosen addresses. @default dns.lookup (all) */
  resolver?: FetchResolver;
  /** Total time of one fetch, redirects and body included. @default 30_000 */
  timeoutMs?: number;
  /** Most bytes read from the wire, and most bytes of the decoded body, of one fetch. @default 26_214_400 (25 MiB) */
  maxBytes?: number;
  /** Redirects followed (each one checked again). @default 5 */
  maxRedirects?: number;
  /**
   * Called synchronously right before a socket is opened, with the checked target; throwing vetoes the
   * connection (the fetch fails with that error). A test seam: tests fail loudly if a connection to a
   * non-loopback address is ever attempted.
   */
  connectHook?: (target: ConnectTarget) => void;
  /**
   * Size of one byte-range request when a CSV source is downloaded (1 MiB is about 15,000 typical rows).
   * A worker holds at most two ranges of a source at once: the one it reads and the next, downloading
   * meanwhile; the rows are committed in pages of their own size (`pageRows` of the CSV expander).
   * @default 1_048_576 (1 MiB)
   */
  rangeBytes?: number;
}

/** Options of one fetch; each narrows the fetcher's own. */
export interface GuardedRequest {
  /** Request headers (`Range`, `If-Range`, ...). `Host` and hop-by-hop headers are not allowed. */
  headers?: Record<string, string>;
  /** @default the fetcher's `timeoutMs` */
  timeoutMs?: number;
  /** @default the fetcher's `maxBytes` */
  maxBytes?: number;
  /** `POST` sends `body` and follows no redirect (a 3xx is the answer). @default 'GET' */
  method?: 'GET' | 'POST';
  /** The request body of a `POST`. */
  body?: string | Buffer;
}

/** A `GuardedFetcher.post`. */
export interface GuardedPost {
  body: string | Buffer;
  /** Request headers (not the connection's own: `host`, `content-length`...). */
  headers?: Record<string, string>;
  /** @default the fetcher's `timeoutMs` (a request's value never exceeds the fetcher's) */
  timeoutMs?: number;
  /** @default the fetcher's `maxBytes` */
  maxBytes?: number;
}

/** What a `GuardedFetcher.post` answers. */
export interface GuardedPostAnswer {
  status: number;
  /** The `Location` header of a 3xx answer (not followed), as sent; null otherwise or without one. */
  location: string | null;
}

/** A response whose headers have arrived; the body is read (or dropped) by the caller. */
export interface GuardedResponse {
  status: number;
  /** The URL that answered, after redirects. */
  url: string;
  /** Response headers, names lower-cased, repeated values joined with `, `. */
  headers: Record<string, string>;
  /**
   * The whole body, decoded from its `Content-Encoding` (gzip, deflate, br), under the byte and time caps.
   * @throws MailroomError `FETCH_REFUSED` when a cap is hit or the connection fails.
   */
  bytes(): Promise<Buffer>;
  /** Drops the body and frees the connection. */
  cancel(): void;
}

/**
 * The only way Mailroom fetches a URL (docs/architecture.md, invariant 7): http(s) only, every resolved
 * address checked and the socket pinned to it, redirects followed by hand and re-checked, time and byte caps.
 */
export interface GuardedFetcher {
  /**
   * GET `url`, following up to `maxRedirects` redirects. Resolves once the final response's headers
   * arrived, whatever its status.
   * @throws MailroomError `FETCH_REFUSED` for every refusal (scheme, address, redirect count, cap) and
   * every failure to connect; `retryable` is true only for failures that may pass (timeout, reset).
   */
  fetch(url: string, request?: GuardedRequest): Promise<GuardedResponse>;
  /**
   * POST `body` to `url` and answer the status as soon as the status line has arrived; the body is then
   * read and dropped in the background, only so that the connection can serve the next request: past
   * `maxBytes`, declared larger by its `Content-Length`, or still coming at the time cap, the connection
   * is dropped instead. No redirect is followed: a 3xx is the answer, with its `Location`. For a caller that needs only the status (webhook sending): no response stream, so much
   * less CPU than `fetch` for a short answer (BENCHMARKS.md, `delivery-webhooks`).
   * @throws MailroomError `FETCH_REFUSED` as `fetch` (refusals, failures to connect, the time cap
   * before the status line).
   */
  post(url: string, request: GuardedPost): Promise<GuardedPostAnswer>;
  /**
   * Check `url` as a fetch would before connecting (scheme, credentials, every resolved address against
   * the policy and the allow-list), without connecting.
   * @throws MailroomError `FETCH_REFUSED` when a fetch of it would be refused.
   */
  check(url: string): Promise<void>;
  /** The resolved options (defaults applied). */
  readonly options: Readonly<Required<Omit<GuardedFetcherOptions, 'connectHook' | 'resolver'>>>;
  /** Closes the pooled connections. */
  close(): Promise<void>;
}
