import { execFile } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/**
 * The drivers are optional peers: these tests run the package's sources in a child process from a folder
 * where none of pg, mysql2 and better-sqlite3 can be resolved (an install that left them out), with only
 * kysely and @mailroom/core beside them. Nothing is mocked: Node's own resolution fails.
 */
const SQL = fileURLToPath(new URL('..', import.meta.url));
const CORE = fileURLToPath(new URL('../../core', import.meta.url));
const fromSql = createRequire(join(SQL, 'package.json'));
const run = promisify(execFile);

/** The app: its own better-sqlite3 and kysely, for a store on its own Kysely instance. */
const APP = `
import { createRequire } from 'node:module';
import Database from 'better-sqlite3';
import { Kysely, SqliteDialect, sql } from 'kysely';
import { sqlStore } from '../sql/src/index.ts';

const fromSql = createRequire(new URL('../sql/src/index.ts', import.meta.url));
const out = { resolvable: [] };
for (const driver of ['pg', 'mysql2', 'better-sqlite3']) {
  try {
    out.resolvable.push(fromSql.resolve(driver));
  } catch {}
}
for (const url of process.argv.slice(2)) {
  try {
    await sqlStore({ url }).close();
    out[url] = 'created';
  } catch (error) {
    out[url] = { name: error.name, code: error.code, message: error.message };
  }
}
const db = new Kysely({ dialect: new SqliteDialect({ database: new Database(':memory:') }) });
const store = sqlStore({ db, dialect: 'sqlite' });
await store.init();
const project = { id: 'prj_1', name: 'Own Kysely', createdAt: new Date(1) };
await store.createProject(project, {
  hash: 'h1',
  id: 'key_1',
  projectId: project.id,
  mode: 'live',
  scope: 'full',
  domains: [],
  prefix: 'sk_live_',
  createdAt: new Date(1),
  lastUsedAt: null,
  revokedAt: null,
  expiresAt: null,
  replacedBy: null,
});
await store.close();
const { rows } = await sql\`select name from mailroom_projects\`.execute(db);
out.kysely = rows.map((row) => row.name);
await db.destroy();
console.log(JSON.stringify(out));
`;

describe('optional database drivers', () => {
  let root: string;

  beforeAll(() => {
    root = mkdtempSync(join(tmpdir(), 'mailroom-sql-drivers-'));
    const link = (from: string, to: string) => {
      mkdirSync(dirname(to), { recursive: true });
      symlinkSync(from, to, 'dir');
    };
    const sql = join(root, 'sql');
    cpSync(join(SQL, 'src'), join(sql, 'src'), { recursive: true });
    writeFileSync(join(sql, 'package.json'), '{"type":"module"}');
    link(realpathSync(join(SQL, 'node_modules/kysely')), join(sql, 'node_modules/kysely'));
    link(CORE, join(sql, 'node_modules/@mailroom/core'));
    const app = join(root, 'app');
    mkdirSync(app);
    writeFileSync(join(app, 'package.json'), '{"type":"module"}');
    writeFileSync(join(app, 'main.mjs'), APP);
    link(join(sql, 'node_modules/kysely'), join(app, 'node_modules/kysely'));
    link(realpathSync(join(SQL, 'node_modules/better-sqlite3')), join(app, 'node_modules/better-sqlite3'));
  });
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  it('a URL whose driver is missing fails with a MailroomError naming the package; an own Kysely needs none', {
    timeout: 60_000,
  }, async () => {
    const tsx = pathToFileURL(fromSql.resolve('tsx')).href;
    const urls = ['postgres://127.0.0.1:1/none', 'mariadb://127.0.0.1:1/none', 'sqlite::memory:'];
    const { stdout } = await run(
      process.execPath,
      ['--conditions=mailroom-source', '--import', tsx, 'main.mjs', ...urls],
      // No NODE_PATH: a package manager's script shim sets one that reaches every hoisted package.
      { cwd: join(root, 'app'), env: withoutNodePath(), timeout: 60_000 },
    );
    const error = (message: string) => ({
      name: 'MailroomError',
      code: 'INTERNAL',
      message: `[sql] ${message}`,
    });
    expect(JSON.parse(stdout)).toEqual({
      resolvable: [], // else this test would prove nothing
      'postgres://127.0.0.1:1/none': error('The PostgreSQL dialect needs the `pg` package: npm install pg'),
      'mariadb://127.0.0.1:1/none': error(
        'The MySQL/MariaDB dialect needs the `mysql2` package: npm install mysql2',
      ),
      'sqlite::memory:': error(
        'The SQLite dialect needs the `better-sqlite3` package: npm install better-sqlite3',
      ),
      kysely: ['Own Kysely'],
    });
  });
});

describe('better-sqlite3 installed without its native module', () => {
  let root: string;
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  // What pnpm leaves when better-sqlite3 is not in `onlyBuiltDependencies`: the package's JavaScript, no
  // `build/` folder. The real package is copied without that folder, so its own `bindings` lookup fails.
  it('opening a SQLite store names the package manager setting that lets it build', {
    timeout: 60_000,
  }, async () => {
    root = mkdtempSync(join(tmpdir(), 'mailroom-sql-unbuilt-'));
    const real = realpathSync(join(SQL, 'node_modules/better-sqlite3'));
    const copy = join(root, 'sql/node_modules/better-sqlite3');
    for (const part of ['lib', 'package.json'])
      cpSync(join(real, part), join(copy, part), { recursive: true });
    symlinkSync(realpathSync(join(real, '../bindings')), join(root, 'sql/node_modules/bindings'), 'dir');
    symlinkSync(realpathSync(join(SQL, 'node_modules/kysely')), join(root, 'sql/node_modules/kysely'), 'dir');
    mkdirSync(join(root, 'sql/node_modules/@mailroom'));
    symlinkSync(CORE, join(root, 'sql/node_modules/@mailroom/core'), 'dir');
    cpSync(join(SQL, 'src'), join(root, 'sql/src'), { recursive: true });
    writeFileSync(join(root, 'sql/package.json'), '{"type":"module"}');
    writeFileSync(
      join(root, 'sql/main.mjs'),
      `import { sqlStore } from './src/index.ts';
       try {
         await sqlStore({ url: 'sqlite::memory:' }).init();
         console.log(JSON.stringify('opened'));
       } catch (error) {
         console.log(JSON.stringify({ name: error.name, message: error.message, cause: error.cause?.message }));
       }`,
    );
    const tsx = pathToFileURL(fromSql.resolve('tsx')).href;
    const { stdout } = await run(
      process.execPath,
      ['--conditions=mailroom-source', '--import', tsx, 'main.mjs'],
      { cwd: join(root, 'sql'), env: withoutNodePath(), timeout: 60_000 },
    );
    expect(JSON.parse(stdout)).toEqual({
      name: 'MailroomError',
      message: expect.stringMatching(
        /^\[sql\] better-sqlite3 is installed but its native module was not built.*`pnpm\.onlyBuiltDependencies`.*`pnpm rebuild better-sqlite3`/,
      ),
      cause: expect.stringContaining('Could not locate the bindings file'),
    });
  });
});

function withoutNodePath(): NodeJS.ProcessEnv {
  const { NODE_PATH: _, ...env } = process.env;
  return env;
}
