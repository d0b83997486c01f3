/**
 * The database drivers, optional peer dependencies of this package: each loads when its dialect is first
 * used (a URL that names it), so an application installs only the one it uses, and one that hands the
 * store its own Kysely instance or dialect needs none. All three are CommonJS, so `require` stays sync.
 */
import { createRequire } from 'node:module';
import { MailroomError } from '@mailroom/core';
import type BetterSqlite3 from 'better-sqlite3';
import type mysql from 'mysql2';
import type pg from 'pg';

const load = createRequire(import.meta.url);

/** The `pg` module, for PostgreSQL URLs. */
export const loadPg = (): typeof pg => loadDriver('pg', 'PostgreSQL');

/** The `mysql2` module, for MySQL and MariaDB URLs. */
export const loadMysql = (): typeof mysql => loadDriver('mysql2', 'MySQL/MariaDB');

/** The `better-sqlite3` module, for SQLite URLs and paths. */
export const loadSqlite = (): typeof BetterSqlite3 => loadDriver('better-sqlite3', 'SQLite');

/** Where `better-sqlite3` resolves from here, for a worker thread to load the same copy. */
export function sqliteModulePath(): string {
  loadSqlite();
  return load.resolve('better-sqlite3');
}

/**
 * What opening a SQLite file failed of: better-sqlite3 installed without its native module says only
 * "Could not locate the bindings file". Its install script builds that module, and pnpm (and npm with
 * `allowScripts`) skip install scripts that were not allowed, so the error names the setting.
 */
export function sqliteOpenError(error: unknown): unknown {
  if (!(error instanceof Error) || !error.message.includes('Could not locate the bindings file'))
    return error;
  return new MailroomError(
    'INTERNAL',
    'better-sqlite3 is installed but its native module was not built: its install script did not run. ' +
      'With pnpm, list it in `pnpm.onlyBuiltDependencies` in package.json (or run `pnpm approve-builds`), ' +
      'then `pnpm rebuild better-sqlite3`; with npm, `npm install-scripts approve better-sqlite3`, then ' +
      '`npm rebuild better-sqlite3`',
    { source: 'sql', cause: error },
  );
}

function loadDriver<T>(name: string, dialect: string): T {
  try {
    return load(name) as T;
  } catch (error) {
    // Only the driver itself missing; a driver that fails to load for another reason says so itself.
    if (!isNotFound(error, name)) throw error;
    throw new MailroomError(
      'INTERNAL',
      `The ${dialect} dialect needs the \`${name}\` package: npm install ${name}`,
      {
        source: 'sql',
        cause: error,
      },
    );
  }
}

function isNotFound(error: unknown, name: string): boolean {
  const { code, message } = (error ?? {}) as { code?: unknown; message?: unknown };
  return code === 'MODULE_NOT_FOUND' && typeof message === 'string' && message.includes(`'${name}'`);
}
