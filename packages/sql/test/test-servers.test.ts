import { createServer, type Server, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { probeServer, type ServerKind } from './support/servers.js';

/**
 * The probe that decides whether the PostgreSQL and MariaDB suites run without their environment variable
 * (test/support/servers.ts): a closed port and a server that accepts but never speaks both give one line
 * saying why, quickly, so that a machine without the servers skips (or, in CI, fails) instead of hanging.
 */
describe('the test-server probe', () => {
  let server: Server | undefined;
  const sockets: Socket[] = [];

  afterEach(async () => {
    for (const socket of sockets.splice(0)) socket.destroy();
    await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
    server = undefined;
  });

  /** A loopback port that accepts connections and never answers. */
  async function silentPort(): Promise<number> {
    const silent = createServer((socket) => sockets.push(socket));
    server = silent;
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    return (silent.address() as { port: number }).port;
  }

  /** A loopback port nothing listens on (bound, then freed). */
  async function closedPort(): Promise<number> {
    const port = await silentPort();
    await new Promise<void>((resolve) => server?.close(() => resolve()));
    server = undefined;
    return port;
  }

  const urlOf = (kind: ServerKind, port: number) =>
    kind === 'postgres'
      ? `postgres://postgres@127.0.0.1:${port}/test`
      : `mysql://root@127.0.0.1:${port}/test`;

  for (const kind of ['postgres', 'mysql'] as const) {
    it(`${kind}: a closed port is refused in one line`, async () => {
      const url = urlOf(kind, await closedPort());
      const problem = await probeServer(kind, url);
      expect(problem).toMatch(
        new RegExp(`^${url.replace(/[.:/]/g, '\\$&')} does not answer: .*ECONNREFUSED`),
      );
      expect(problem).not.toContain('\n');
    });

    it(`${kind}: a server that never answers is given up within seconds`, async () => {
      const url = urlOf(kind, await silentPort());
      const started = Date.now();
      const problem = await probeServer(kind, url);
      expect(problem).toMatch(/does not answer: /);
      expect(Date.now() - started).toBeLessThan(10_000);
    });
  }
});
