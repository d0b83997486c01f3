/**
 * Webhook endpoints that misbehave, each an HTTP server on 127.0.0.1 (random port), for the isolation
 * test and benchmark: one that accepts and never answers, one that answers 200 after 9 s, one whose 200
 * carries a 300 MB body, one that redirects to a loopback address the sender may not reach, and that
 * address itself (counting the connections it gets: there must be none).
 *
 * ```ts
 * const bad = await startBadEndpoints();
 * // allow-list bad.hanging.host, bad.slow.host, bad.big.host, bad.redirect.host (never bad.forbidden.host)
 * await mailroom.webhooks.add(secret, { url: bad.hanging.url });
 * ```
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

/** One misbehaving endpoint. */
export interface BadEndpoint {
  /** `http://127.0.0.1:PORT/hook` */
  readonly url: string;
  /** `127.0.0.1:PORT`, for `fetch.allowHosts`. */
  readonly host: string;
  /** Requests received (their headers arrived). */
  requests: number;
  /** Requests open now (received, not yet closed). */
  open: number;
  /** The most requests it had open at once. */
  maxOpen: number;
  /** TCP connections accepted. */
  connections: number;
}

/** The endpoint with the large body. */
export interface BigBodyEndpoint extends BadEndpoint {
  /**
   * Per request, the body bytes the server had handed to its socket when the client closed. It writes
   * a chunk at a time at a steady pace that keeps the socket buffers empty (on loopback a server writing
   * as fast as it can fills its own send buffer, several MiB, before the client reads a byte), so these
   * are the bytes the client took.
   */
  readonly written: number[];
}

/** Settings of {@link startBadEndpoints}. */
export interface BadEndpointOptions {
  /** How long the slow endpoint waits before its 200. @default 9_000 */
  slowMs?: number;
  /** The size of the large body. @default 300 MB */
  bigBytes?: number;
  /** Chunk of the large body. @default 16 KiB */
  chunkBytes?: number;
  /** Pause between two chunks of the large body, in milliseconds. @default 2 */
  chunkEveryMs?: number;
}

/** The running endpoints. */
export interface BadEndpoints {
  /** Reads the request and never answers. */
  hanging: BadEndpoint;
  /** Answers 200 after `slowMs`. */
  slow: BadEndpoint;
  /** Answers 200 with a `bigBytes` body, chunked, never held in memory. */
  big: BigBodyEndpoint;
  /** Answers 302 with `Location: <forbidden>/inside`. */
  redirect: BadEndpoint;
  /** The redirect's target: a loopback port the sender is not allowed to reach. */
  forbidden: BadEndpoint;
  close(): Promise<void>;
}

/** Starts the endpoints. */
export async function startBadEndpoints(options: BadEndpointOptions = {}): Promise<BadEndpoints> {
  const slowMs = options.slowMs ?? 9_000;
  const bigBytes = options.bigBytes ?? 300_000_000;
  const chunk = Buffer.alloc(options.chunkBytes ?? 16 * 1024, 'b');
  const every = options.chunkEveryMs ?? 2;
  const servers: Array<{ server: Server; sockets: Set<Socket> }> = [];
  const timers = new Set<ReturnType<typeof setTimeout>>();

  async function start(
    handle: (req: IncomingMessage, res: ServerResponse) => void,
  ): Promise<BadEndpoint & { server: Server }> {
    const sockets = new Set<Socket>();
    const server = createServer((req, res) => {
      endpoint.requests++;
      endpoint.open++;
      endpoint.maxOpen = Math.max(endpoint.maxOpen, endpoint.open);
      res.on('close', () => {
        endpoint.open--;
      });
      handle(req, res);
    });
    server.on('connection', (socket) => {
      endpoint.connections++;
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
    });
    server.keepAliveTimeout = 30_000;
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    servers.push({ server, sockets });
    const { port } = server.address() as AddressInfo;
    const endpoint = {
      url: `http://127.0.0.1:${port}/hook`,
      host: `127.0.0.1:${port}`,
      requests: 0,
      open: 0,
      maxOpen: 0,
      connections: 0,
      server,
    };
    return endpoint;
  }

  const hanging = await start((req) => {
    req.resume();
  });
  const slow = await start((req, res) => {
    req.resume();
    const timer = setTimeout(() => {
      timers.delete(timer);
      if (!res.destroyed) res.writeHead(200, { 'content-type': 'text/plain' }).end('ok, eventually');
    }, slowMs);
    timers.add(timer);
  });
  const written: number[] = [];
  const big = Object.assign(
    await start((req, res) => {
      req.resume();
      const at = written.push(0) - 1;
      let queued = 0;
      res.writeHead(200, { 'content-type': 'application/octet-stream' });
      const timer = setInterval(() => {
        if (res.destroyed || queued >= bigBytes) {
          clearInterval(timer);
          if (!res.destroyed) res.end();
          return;
        }
        queued += chunk.length;
        res.write(chunk, (error) => {
          if (!error) written[at] = (written[at] ?? 0) + chunk.length;
        });
      }, every);
      res.on('close', () => clearInterval(timer));
    }),
    { written },
  );
  const forbidden = await start((req, res) => {
    req.resume();
    res.writeHead(200).end('should never be reached');
  });
  const redirect = await start((req, res) => {
    req.resume();
    res.writeHead(302, { location: `${forbidden.url}/inside?token=t0p` }).end('moved');
  });

  return {
    hanging,
    slow,
    big,
    redirect,
    forbidden,
    async close() {
      for (const timer of timers) clearTimeout(timer);
      await Promise.all(
        servers.map(
          ({ server, sockets }) =>
            new Promise<void>((resolve) => {
              for (const socket of sockets) socket.destroy();
              server.close(() => resolve());
            }),
        ),
      );
    },
  };
}
