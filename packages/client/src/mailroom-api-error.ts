import type { components } from './openapi-types.js';

/** The error codes of the API (the document's `ErrorCode`; `x-error-codes` gives each one's status). */
export type ErrorCode = components['schemas']['ErrorCode'];

/** The error envelope every route answers with: the spec's `message` and `statusCode`, and our `code`. */
export type ErrorBody = components['schemas']['ErrorResponse'];

/** A status the server did not answer with its envelope (a proxy's page, say): the code it stands for. */
const CODE_OF_STATUS: Readonly<Record<number, ErrorCode>> = {
  400: 'VALIDATION_FAILED',
  401: 'UNAUTHORIZED',
  403: 'FORBIDDEN',
  404: 'NOT_FOUND',
  405: 'METHOD_NOT_ALLOWED',
  409: 'CONFLICT',
  410: 'GONE',
  413: 'PAYLOAD_TOO_LARGE',
  415: 'UNSUPPORTED_MEDIA_TYPE',
  422: 'UNPROCESSABLE',
  429: 'RATE_LIMITED',
};

/**
 * What a call the server refused rejects with: the HTTP status and the answer's error envelope, as the
 * OpenAPI document declares it. An answer that is not the envelope (a proxy or load balancer speaking)
 * still gives one, with the code its status stands for and the start of its text as the message.
 */
export class MailroomApiError extends Error {
  override readonly name = 'MailroomApiError';
  /** The HTTP status. */
  readonly status: number;
  /**
   * The machine-readable code. A server newer than this client may send a code the union does not name
   * yet; it is passed through as received.
   */
  readonly code: ErrorCode;
  /** The error envelope as answered (or as made up for an answer that was not one). */
  readonly body: ErrorBody;
  /** The `X-Request-ID` of the answer, for support and the server's logs. */
  readonly requestId: string | undefined;
  /** Seconds to wait before retrying (`Retry-After` of a 429 or 503), when the answer gives it. */
  readonly retryAfter: number | undefined;

  constructor(status: number, body: ErrorBody, headers?: Headers) {
    super(body.message);
    this.status = status;
    this.code = body.code;
    this.body = body;
    this.requestId = headers?.get('x-request-id') ?? undefined;
    const retry = Number(headers?.get('retry-after') ?? Number.NaN);
    this.retryAfter = Number.isFinite(retry) ? retry : undefined;
  }

  /** The error of a refused answer; reads its body. */
  static async fromResponse(response: Response): Promise<MailroomApiError> {
    const text = await response.text().catch(() => '');
    return new MailroomApiError(response.status, envelopeOf(response.status, text), response.headers);
  }
}

/** The answer's envelope when it is one, else one made from the status and the text. */
function envelopeOf(status: number, text: string): ErrorBody {
  try {
    const parsed: unknown = JSON.parse(text);
    if (isEnvelope(parsed)) return parsed;
  } catch {
    // not JSON: made up below
  }
  const code = CODE_OF_STATUS[status] ?? 'INTERNAL';
  const excerpt = text.replace(/\s+/g, ' ').trim().slice(0, 200);
  const message = `HTTP ${status}${excerpt ? `: ${excerpt}` : ''}`;
  return { message, statusCode: status, code, error: message, detail: message };
}

function isEnvelope(value: unknown): value is ErrorBody {
  if (typeof value !== 'object' || value === null) return false;
  const { message, code, statusCode } = value as Record<string, unknown>;
  return typeof message === 'string' && typeof code === 'string' && typeof statusCode === 'number';
}
