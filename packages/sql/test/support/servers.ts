/**
 * The PostgreSQL and MariaDB/MySQL servers the tests run against: the URL in `MAILROOM_TEST_POSTGRES_URL` /
 * `MAILROOM_TEST_MYSQL_URL` when set, else the standard local server when it answers a quick probe. A
 * suite whose server is missing registers, through {@link missingServerTest}, one skipped test and one
 * warning line naming the server and how to start it, or under `CI` one failing test.
 */
import mysql from 'mysql2/promise';
import pg from 'pg';
import { it } from 'vitest';

/** A database server kind the SQL store speaks to over the network. */
export type ServerKind = 'postgres' | 'mysql';

/** What the tests know about each server kind. */
export const TEST_SERVERS: Record<
  ServerKind,
  { name: string; variable: string; localUrl: string; howToStart: string }
> = {
  postgres: {
    name: 'PostgreSQL',
    variable: 'MAILROOM_TEST_POSTGRES_URL',
    localUrl: 'postgres://postgres@127.0.0.1:5432/test',
    howToStart:
      'start it (Debian: pg_ctlcluster <version> main start) with a trusted postgres user and a database "test"',
  },
  mysql: {
    name: 'MariaDB/MySQL',
    variable: 'MAILROOM_TEST_MYSQL_URL',
    localUrl: 'mysql://root@127.0.0.1:3306/test',
    howToStart: 'start it (Debian: service mariadb start) with a password-less root and a database "test"',
  },
};

/** The server a suite runs against, or why there is none. */
export type TestServer =
  | { kind: ServerKind; url: string; problem?: undefined }
  | { kind: ServerKind; url?: undefined; problem: string };

/** Time for the probe's connection and query: a local server answers in milliseconds. */
const PROBE_TIMEOUT_MS = 2_000;

/**
 * Probes run once per process: kept on `globalThis`, which outlives the module instances of the test files
 * that share a worker process.
 */
const PROBES_KEY = Symbol.for('mailroom.test.servers');
const shared = globalThis as { [PROBES_KEY]?: Map<ServerKind, Promise<TestServer>> };
shared[PROBES_KEY] ??= new Map();
const probes = shared[PROBES_KEY];

/**
 * The server of `kind` for the tests: the environment variable's URL if set (not probed: a wrong one
 * fails the tests, as it should), else the standard local URL if a server answers there.
 */
export function testServer(kind: ServerKind): Promise<TestServer> {
  let probe = probes.get(kind);
  if (!probe) {
    probe = resolveServer(kind);
    probes.set(kind, probe);
  }
  return probe;
}

const warned = new Set<ServerKind>();

/**
 * Registers what a suite does without its server: outside CI one skipped test, named for the server and
 * how to start it, plus the same line on stderr (once per test file), so that a skip is never silent;
 * under `CI` a failing test, since CI must run every suite.
 */
export function missingServerTest(server: TestServer, suite: string): void {
  const { name, variable, howToStart } = TEST_SERVERS[server.kind];
  const line = `${suite}: no ${name} server (${server.problem}); ${howToStart}, or set ${variable}`;
  if (process.env.CI) {
    it(`${name} answers (required under CI)`, () => {
      throw new Error(line);
    });
    return;
  }
  if (!warned.has(server.kind)) {
    warned.add(server.kind);
    console.warn(`skipped: ${line}`);
  }
  it.skip(line, () => undefined);
}

/**
 * Connects to the server at `url` and runs `SELECT 1`, within {@link PROBE_TIMEOUT_MS} for the connection
 * and again for the query. Resolves to undefined when it answered, else to why not, in one line.
 */
export async function probeServer(kind: ServerKind, url: string): Promise<string | undefined> {
  try {
    await (kind === 'postgres' ? probePostgres(url) : probeMysql(url));
    return undefined;
  } catch (error) {
    const reason = error instanceof Error ? error.message.split('\n')[0] : String(error);
    return `${url} does not answer: ${reason || (error as { code?: string }).code || 'no reason given'}`;
  }
}

async function resolveServer(kind: ServerKind): Promise<TestServer> {
  const { variable, localUrl } = TEST_SERVERS[kind];
  const given = process.env[variable]?.trim();
  if (given) return { kind, url: given };
  const problem = await probeServer(kind, localUrl);
  return problem === undefined ? { kind, url: localUrl } : { kind, problem };
}

async function probePostgres(url: string): Promise<void> {
  const client = new pg.Client({
    connectionString: url,
    connectionTimeoutMillis: PROBE_TIMEOUT_MS,
    query_timeout: PROBE_TIMEOUT_MS,
  });
  client.on('error', () => {}); // a late socket error after a failed connect must not crash the run
  try {
    await client.connect();
    await client.query('SELECT 1');
  } finally {
    await client.end().catch(() => {});
  }
}

async function probeMysql(url: string): Promise<void> {
  const connection = await mysql.createConnection({ uri: url, connectTimeout: PROBE_TIMEOUT_MS });
  connection.on('error', () => {});
  try {
    await connection.query({ sql: 'SELECT 1', timeout: PROBE_TIMEOUT_MS });
  } finally {
    await connection.end().catch(() => {});
  }
}
