import { afterAll, beforeAll, it } from 'vitest';
import {
  type Pgbouncer,
  pgbouncerExecutable,
  startPgbouncer,
} from '../../packages/sql/test/support/pgbouncer.js';
import { missingServerTest, testServer } from '../../packages/sql/test/support/servers.js';
import { pgTestSchema } from './pg-admin.js';

/** How a test reaches PostgreSQL: directly, or through PgBouncer in transaction mode (issue 42). */
export type PostgresVia = 'direct' | 'pgbouncer';

/** A new, empty database of a test's own: its URL (what the processes open) and how to drop it. */
export type NewPostgresDatabase = (prefix: string) => Promise<{ url: string; drop(): Promise<void> }>;

/** PostgreSQL reached one way, found at module load (top-level await), used inside a `describe`. */
export type PostgresTarget =
  | {
      ready: true;
      via: PostgresVia;
      /** Registers the file's set-up (PgBouncer started once) and returns the maker of databases. */
      databases(): NewPostgresDatabase;
    }
  | {
      ready: false;
      via: PostgresVia;
      /** Registers one skipped test saying what is missing, or under `CI` one failing test. */
      report(suite: string): void;
    };

/**
 * PostgreSQL for the tests `via` the given way. Directly: a schema per database (as every PostgreSQL
 * test). Through PgBouncer (found or installed, see pgbouncer.ts): started once per file, a database per
 * test, URLs with `pgbouncer=true`.
 */
export async function postgresTarget(via: PostgresVia): Promise<PostgresTarget> {
  const server = await testServer('postgres');
  if (server.problem !== undefined) {
    return { ready: false, via, report: (suite) => missingServerTest(server, suite) };
  }
  if (via === 'direct') {
    return { ready: true, via, databases: () => (prefix) => pgTestSchema(server.url, prefix) };
  }
  const executable = await pgbouncerExecutable();
  if ('problem' in executable) {
    return {
      ready: false,
      via,
      report(suite) {
        if (process.env.CI) {
          it(`${suite}: finds or installs PgBouncer`, () => {
            throw new Error(executable.problem);
          });
        } else {
          it.skip(`${suite}: ${executable.problem}`);
        }
      },
    };
  }
  return {
    ready: true,
    via,
    databases() {
      let bouncer: Pgbouncer | undefined;
      beforeAll(async () => {
        bouncer = await startPgbouncer(executable.path, server.url);
      });
      afterAll(() => bouncer?.close());
      return (prefix) => {
        if (!bouncer) throw new Error('PgBouncer did not start');
        return bouncer.database(prefix);
      };
    },
  };
}
