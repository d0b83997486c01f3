/**
 * The one error type of Mailroom. Every failure the engine, a store, a transport or the HTTP layer
 * reports is a `MailroomError` with a `code` from {@link ERROR_CODES}; the HTTP status of a code is read
 * from that table and nowhere else.
 */

/** One row of the code table. */
export interface ErrorCodeInfo {
  /** HTTP status the HTTP adapter answers with. */
  readonly status: number;
  /** Whether retrying the same operation later may succeed. */
  readonly retryable: boolean;
  /** What the code means, for docs and the OpenAPI document. */
  readonly description: string;
}

/** The code table: every error code, its HTTP status and whether it is retryable. */
export const ERROR_CODES = {
  VALIDATION_FAILED: {
    status: 400,
    retryable: false,
    description: 'The request body breaks a rule of the spec.',
  },
  MALFORMED_JSON: { status: 400, retryable: false, description: 'The request body is not valid JSON.' },
  UNAUTHORIZED: {
    status: 401,
    retryable: false,
    description:
      'The project key is missing, malformed, unknown, revoked or expired (a rotated key past its grace).',
  },
  SENDER_NOT_ALLOWED: {
    status: 403,
    retryable: false,
    description: 'The sender address is not an identity of the project.',
  },
  DOMAIN_NOT_VERIFIED: {
    status: 403,
    retryable: false,
    description:
      "The sender's domain is not a verified domain of the project, and the sending policy is `enforce`: the message names the record missing or wrong.",
  },
  FORBIDDEN: {
    status: 403,
    retryable: false,
    description:
      "The key's scope does not allow this route (the message names the scope it needs), or a dashboard form came without its session token, or from another site.",
  },
  NOT_FOUND: {
    status: 404,
    retryable: false,
    description: 'A referenced template, audience group, broadcast or message does not exist in the project.',
  },
  GONE: {
    status: 410,
    retryable: false,
    description: "The link's contact was erased from the project: there is nothing left to show.",
  },
  METHOD_NOT_ALLOWED: {
    status: 405,
    retryable: false,
    description: 'The path does not take this method.',
  },
  BROADCAST_CLOSED: {
    status: 409,
    retryable: false,
    description: 'The broadcast can no longer take a batch (cancelled or failed).',
  },
  CONFLICT: {
    status: 409,
    retryable: false,
    description: 'The record already exists or was changed concurrently.',
  },
  IDEMPOTENCY_CONFLICT: {
    status: 409,
    retryable: true,
    description: 'The idempotency key was used with another body, or its first request is still running.',
  },
  PAYLOAD_TOO_LARGE: {
    status: 413,
    retryable: false,
    description: 'The body or its attachments exceed the limit.',
  },
  UNSUPPORTED_MEDIA_TYPE: { status: 415, retryable: false, description: 'The body is not application/json.' },
  UNPROCESSABLE: {
    status: 422,
    retryable: false,
    description:
      'The request is well formed but cannot be carried out (for example a CSV host without byte ranges).',
  },
  TEMPLATE_INVALID: {
    status: 422,
    retryable: false,
    description: 'A template does not compile (MJML or Liquid syntax).',
  },
  RENDER_FAILED: {
    status: 422,
    retryable: false,
    description: 'A message could not be rendered for a recipient (for example a missing strict variable).',
  },
  FETCH_REFUSED: {
    status: 422,
    retryable: false,
    description: 'A URL was refused by the guarded fetcher or could not be fetched within its caps.',
  },
  RATE_LIMITED: {
    status: 429,
    retryable: true,
    description: 'Too many requests for the project, or too many wrong keys from the client address.',
  },
  TRANSPORT_TRANSIENT: {
    status: 503,
    retryable: true,
    description: 'The transport failed in a way that may pass (SMTP 4xx, timeout, dropped connection).',
  },
  TRANSPORT_PERMANENT: {
    status: 502,
    retryable: false,
    description: 'The transport refused the message for good (SMTP 5xx).',
  },
  LEASE_LOST: {
    status: 409,
    retryable: false,
    description: 'A worker wrote to a delivery whose lease it no longer holds.',
  },
  INBOUND_DEFERRED: {
    status: 503,
    retryable: true,
    description:
      'A bounce or complaint names a delivery whose send outcome is not recorded yet; the sender should retry it later.',
  },
  TRANSACTION_REFUSED: {
    status: 500,
    retryable: false,
    description:
      "A transaction given to send or broadcast cannot carry the request: the store is not on the app's database (the memory store, another database or driver), or it is not an open transaction.",
  },
  STORE_UNAVAILABLE: {
    status: 503,
    retryable: true,
    description:
      'The store cannot be reached for now (connection refused or reset, a timeout, a database shutting down, a SQLite file still locked after its wait): nothing was written; retry after `Retry-After` seconds.',
  },
  STORAGE_FULL: {
    status: 503,
    retryable: true,
    description:
      "The store's disk is full, or its free space is below the reserve kept for recording what was already accepted: new sends are refused, nothing was written, accepted mail is still delivered; retry after `Retry-After` seconds.",
  },
  STORE_FAILED: { status: 500, retryable: true, description: 'The store failed.' },
  INTERNAL: { status: 500, retryable: false, description: 'An unexpected fault.' },
} as const satisfies Record<string, ErrorCodeInfo>;

/** Every error code. */
export type ErrorCode = keyof typeof ERROR_CODES;

/** One validation issue, as zod reports it: the field path and the rule it breaks. */
export interface ValidationIssue {
  /** zod's issue code (`invalid_type`, `too_big`, `custom`, ...). */
  readonly code: string;
  /** Path of the offending field, for example `['recipients', 3, 'address']`. */
  readonly path: ReadonlyArray<string | number>;
  /** Human-readable rule, for example `At most 10 recipients per request`. */
  readonly message: string;
}

/** Extra facts an error may carry. */
export interface MailroomErrorOptions {
  /** The underlying error. */
  cause?: unknown;
  /** Validation issues (for `VALIDATION_FAILED`). */
  issues?: ValidationIssue[];
  /** SMTP reply code (transports), for example 550. */
  responseCode?: number;
  /** SMTP command that got the reply, for example `RCPT TO`. */
  command?: string;
  /** The raw reply text (transports). */
  response?: string;
  /** Overrides the table's `retryable`. */
  retryable?: boolean;
  /** Seconds after which a retry may succeed (`RATE_LIMITED`). */
  retryAfter?: number;
  /** Who raised it (store, transport or component name); prefixes the message. */
  source?: string;
  /** Transports: what the worker should do besides retrying (see {@link Backpressure}). */
  backpressure?: Backpressure;
}

/**
 * What a transport's failure asks of the worker besides a retry of the message:
 * - `slow-down`: the provider throttles (SMTP 421/454, which mean it without saying so; an API's
 *   "too many requests"): fewer sends at once and a short pause;
 * - `pause`: the account may not send for now (Amazon SES `SendingPausedException`): the worker stops
 *   sending through the transport for a while, and the paused attempt never makes a delivery fail;
 * - `none`: nothing, even for a 421 (a router that sends the next attempt elsewhere says so).
 */
export type Backpressure = 'none' | 'slow-down' | 'pause';

/** The one error type of Mailroom. */
export class MailroomError extends Error {
  override readonly name = 'MailroomError';
  readonly code: ErrorCode;
  readonly status: number;
  readonly retryable: boolean;
  readonly issues?: ValidationIssue[];
  readonly responseCode?: number;
  readonly command?: string;
  readonly response?: string;
  readonly retryAfter?: number;
  readonly backpressure?: Backpressure;

  constructor(code: ErrorCode, message: string, options: MailroomErrorOptions = {}) {
    super(options.source ? `[${options.source}] ${message}` : message, { cause: options.cause });
    const info: ErrorCodeInfo = ERROR_CODES[code];
    this.code = code;
    this.status = info.status;
    this.retryable = options.retryable ?? info.retryable;
    if (options.issues) this.issues = options.issues;
    if (options.responseCode !== undefined) this.responseCode = options.responseCode;
    if (options.command !== undefined) this.command = options.command;
    if (options.response !== undefined) this.response = options.response;
    if (options.retryAfter !== undefined) this.retryAfter = options.retryAfter;
    if (options.backpressure !== undefined) this.backpressure = options.backpressure;
  }
}

/** True when `error` is a `MailroomError`, optionally of one of `codes`. */
export function isMailroomError(error: unknown, ...codes: ErrorCode[]): error is MailroomError {
  return error instanceof MailroomError && (codes.length === 0 || codes.includes(error.code));
}

/** The codes of a store outage: transient, answered 503 with `Retry-After`, logged once per outage. */
export const OUTAGE_CODES = ['STORE_UNAVAILABLE', 'STORAGE_FULL'] as const satisfies readonly ErrorCode[];

/** True when `error` says the store is out for now ({@link OUTAGE_CODES}), not that the operation is wrong. */
export function isStoreOutage(error: unknown): error is MailroomError {
  return isMailroomError(error, ...OUTAGE_CODES);
}
