/** An incoming id we echo back: a sane token, so it is safe in logs and headers. */
const SANE_REQUEST_ID = /^[A-Za-z0-9._-]{1,128}$/;

/**
 * The id of a request: the caller's `X-Request-ID` when it is a sane token (at most 128 characters of
 * `[A-Za-z0-9._-]`), otherwise a fresh one, so a client can correlate its logs with ours.
 */
export function pickRequestId(incoming: string | undefined, generate: () => string): string {
  if (incoming !== undefined && SANE_REQUEST_ID.test(incoming)) return incoming;
  return generate();
}
