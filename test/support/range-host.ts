import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A loopback file host that honours `Range` and `If-Range` like S3 does (or ignores ranges, on request). */
export interface RangeHost {
  url: string;
  allow: string;
  /** Requests seen: the Range and If-Range headers, and the status answered. */
  log: Array<{ range: string | undefined; ifRange: string | undefined; status: number }>;
  /** Replaces the file (a new ETag). */
  replace(body: Buffer): void;
  /** Called with the request count at the start of each request, before anything is decided. */
  onRequest?: (n: number) => void;
  /** Answer this many of the next requests with a 503. */
  failNext: number;
  close(): Promise<void>;
}

/** Serves `initial` on 127.0.0.1 at a path with a presigned-looking query; `allow` is its allow-list entry. */
export async function rangeHost(initial: Buffer, opts: { ranges?: boolean } = {}): Promise<RangeHost> {
  let body = initial;
  let version = 1;
  const etag = () => `"v${version}-${body.length}"`;
  const log: RangeHost['log'] = [];
  let requests = 0;
  const server: Server = createServer((req: IncomingMessage, res) => {
    host.onRequest?.(++requests);
    if (host.failNext > 0) {
      host.failNext--;
      log.push({ range: req.headers.range, ifRange: undefined, status: 503 });
      res.writeHead(503).end();
      return;
    }
    const range = req.headers.range;
    const ifRange = req.headers['if-range'] as string | undefined;
    const match = /^bytes=(\d+)-(\d*)$/.exec(range ?? '');
    const honour = opts.ranges !== false && match !== null && (ifRange === undefined || ifRange === etag());
    if (!honour) {
      log.push({ range, ifRange, status: 200 });
      res.writeHead(200, { etag: etag(), 'content-length': body.length, 'content-type': 'text/csv' });
      res.end(body);
      return;
    }
    const first = Number(match[1]);
    const last = Math.min(match[2] === '' ? body.length - 1 : Number(match[2]), body.length - 1);
    if (first >= body.length) {
      log.push({ range, ifRange, status: 416 });
      res.writeHead(416, { 'content-range': `bytes */${body.length}` }).end();
      return;
    }
    log.push({ range, ifRange, status: 206 });
    res.writeHead(206, {
      etag: etag(),
      'content-range': `bytes ${first}-${last}/${body.length}`,
      'content-length': last - first + 1,
      'content-type': 'text/csv',
    });
    res.end(body.subarray(first, last + 1));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const host: RangeHost = {
    failNext: 0,
    url: `http://127.0.0.1:${port}/lists/customers.csv?X-Amz-Signature=abc`,
    allow: `127.0.0.1:${port}`,
    log,
    replace(next) {
      body = next;
      version++;
    },
    close: () => {
      server.closeAllConnections();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
  return host;
}
