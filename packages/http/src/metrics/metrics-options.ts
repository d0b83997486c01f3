/**
 * Options of the Prometheus endpoint. Giving them turns it on; without them `GET /metrics` does not exist,
 * because the figures (request rates, queue depth, failure rates) are about every project of the
 * installation and are nobody's business by default.
 */
export interface MetricsOptions {
  /**
   * When set, a scrape must carry `Authorization: Bearer <token>` (others get 401). Without it the
   * endpoint is open: only for a listener that nothing untrusted can reach.
   * @example { token: process.env.METRICS_TOKEN }
   */
  token?: string;
  /**
   * Path of the endpoint, relative to the mount point.
   * @default '/metrics'
   */
  path?: string;
  /**
   * Also export Node's process metrics (`process_*`, `nodejs_*`: CPU, memory, event loop lag).
   * @default true
   */
  processMetrics?: boolean;
}
