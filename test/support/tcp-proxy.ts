/**
 * A TCP proxy on 127.0.0.1 (random port) in front of a real server, that a test can take down: `down()`
 * resets every open connection (RST) and stops listening, so that new connections are refused
 * (ECONNREFUSED) as when a database goes away; `up()` listens again on the same port. A real part between
 * the engine and its database, not a mock: the bytes are the server's.
 */
import { connect, createServer, type Server, type Socket } from 'node:net';

/** A running proxy. */
export interface TcpProxy {
  readonly port: number;
  /** Resets every connection and refuses new ones. */
  down(): Promise<void>;
  /** Takes connections again (on the same port). */
  up(): Promise<void>;
  close(): Promise<void>;
}

/** Starts a proxy to `target` on 127.0.0.1. */
export async function startTcpProxy(target: { host: string; port: number }): Promise<TcpProxy> {
  const sockets = new Set<Socket>();
  const track = (socket: Socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => undefined);
  };
  const make = (): Server =>
    createServer((client) => {
      const upstream = connect(target.port, target.host);
      track(client);
      track(upstream);
      client.pipe(upstream);
      upstream.pipe(client);
      client.on('close', () => upstream.destroy());
      upstream.on('close', () => client.destroy());
    });
  let server = make();
  await listen(server, 0);
  const port = (server.address() as { port: number }).port;
  let listening = true;

  const stop = async () => {
    if (!listening) return;
    listening = false;
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    for (const socket of sockets) socket.resetAndDestroy();
    await closed;
  };
  return {
    port,
    down: stop,
    async up() {
      if (listening) return;
      server = make();
      await listen(server, port);
      listening = true;
    },
    close: stop,
  };
}

function listen(server: Server, port: number): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
}
