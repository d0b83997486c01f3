/**
 * A request as every binder hands it to the neutral handler. The binder does no parsing: the handler owns
 * JSON parsing, the body size limit and the Content-Type check, so Express and Fastify answer alike.
 */
export interface NeutralRequest {
  /** HTTP method, upper case (`POST`). */
  method: string;
  /** Path relative to the mount point, without the query string (`/send/mail`). */
  path: string;
  /** Request headers with lower-case names; repeated headers joined with `, `. */
  headers: Record<string, string | undefined>;
  /**
   * The raw body bytes, or `undefined` when there is none. A binder that stops reading at the limit passes
   * what it read (more than `bodyLimit` bytes) so that the handler answers 413.
   */
  body: Uint8Array | undefined;
  /** The raw query string, without the `?` (`q=ann&after=x`); absent or empty when there is none. */
  query?: string;
  /** Client address, for logs and the limit of wrong keys per address. */
  ip?: string;
  /** The mount point (`/api`, or `''` at the root); the OpenAPI document names it as its server. */
  base?: string;
}

/** A response as the neutral handler produces it; binders write it out unchanged. */
export interface NeutralResponse {
  status: number;
  /** Response headers with lower-case names. Always has `content-type` and `x-request-id`. */
  headers: Record<string, string>;
  /** The serialized body (JSON; HTML or Prometheus text for the dashboard and `/metrics`). */
  body: string;
  /** A binary body (the tracking pixel): when present, binders write these bytes instead of `body`. */
  bytes?: Uint8Array;
}
