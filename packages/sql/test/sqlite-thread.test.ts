import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { openSqliteFile, type SqliteFile } from '../src/dialects/sqlite/sqlite-database.js';

const dir = mkdtempSync(join(tmpdir(), 'mailroom-sql-checkpoints-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let n = 0;
const file = () => join(dir, `checkpoints-${++n}.db`);

/** Writes about `mib` MiB in transactions of 1 MiB, each a commit that appends to the WAL. */
function write(sqlite: SqliteFile, mib: number): void {
  const db = sqlite.database;
  db.exec('CREATE TABLE IF NOT EXISTS filler (id INTEGER PRIMARY KEY, body BLOB)');
  const insert = db.prepare('INSERT INTO filler (body) VALUES (?)');
  const body = Buffer.alloc(16 * 1024, 7);
  const many = db.transaction((count: number) => {
    for (let i = 0; i < count; i++) insert.run(body);
  });
  for (let i = 0; i < mib; i++) many(64);
}

const autocheckpoint = (sqlite: SqliteFile) =>
  sqlite.database.pragma('wal_autocheckpoint', { simple: true }) as number;

async function until(check: () => boolean, what: string, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('write scripts on the background thread', () => {
  const setup = (sqlite: SqliteFile) => {
    sqlite.database.exec('CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT NOT NULL)');
    sqlite.database.exec('CREATE TABLE fence (id TEXT PRIMARY KEY, token INTEGER)');
    sqlite.database.exec("INSERT INTO fence VALUES ('job', 1)");
    const writer = sqlite.writer();
    if (!writer) throw new Error('expected the thread');
    return writer;
  };
  const rows = (sqlite: SqliteFile) => sqlite.database.prepare('SELECT id, v FROM t ORDER BY id').all();
  const insert = (json: string) => ({
    text: 'INSERT INTO t (id, v) SELECT value ->> 0, value ->> 1 FROM json_each(?)',
    params: [json],
  });
  const fence = (token: number) => ({
    text: 'UPDATE fence SET token = token WHERE id = ? AND token = ?',
    params: ['job', token],
    guard: true,
  });

  it('commits a script as one transaction, seen by the main connection, and counts its changes', async () => {
    const sqlite = openSqliteFile(file(), 5000);
    const writer = setup(sqlite);
    const result = await writer.run([fence(1), insert('[[1,"a"],[2,"b"]]'), insert('[[3,"c"]]')]).result;
    expect(result).toEqual({ committed: true, changes: [1, 2, 1] });
    expect(rows(sqlite)).toEqual([
      { id: 1, v: 'a' },
      { id: 2, v: 'b' },
      { id: 3, v: 'c' },
    ]);
    await sqlite.stopBackgroundWork();
    sqlite.kysely.close();
  });

  it('rolls back on a guard that changes nothing, and on a failing statement (with its code)', async () => {
    const sqlite = openSqliteFile(file(), 5000);
    const writer = setup(sqlite);
    expect(await writer.run([insert('[[1,"a"]]'), fence(2)]).result).toEqual({ committed: false });
    const failing = writer.run([insert('[[2,"b"]]'), insert('[[2,"again"]]')]).result;
    await expect(failing).rejects.toMatchObject({ code: 'SQLITE_CONSTRAINT_PRIMARYKEY' });
    expect(rows(sqlite)).toEqual([]);
    // The connection is usable after both.
    expect(await writer.run([insert('[[5,"e"]]')]).result).toEqual({ committed: true, changes: [1] });
    await sqlite.stopBackgroundWork();
    sqlite.kysely.close();
  });

  it('a script `after` another runs only if that one committed', async () => {
    const sqlite = openSqliteFile(file(), 5000);
    const writer = setup(sqlite);
    const first = writer.run([insert('[[1,"a"]]')]);
    const second = writer.run([insert('[[2,"b"]]')], first.id);
    const fenced = writer.run([fence(9), insert('[[3,"c"]]')]);
    const afterFenced = writer.run([insert('[[4,"d"]]')], fenced.id);
    const broken = writer.run([insert('[[1,"dup"]]')]);
    const afterBroken = writer.run([insert('[[5,"e"]]')], broken.id);
    expect(await second.result).toEqual({ committed: true, changes: [1] });
    expect(await afterFenced.result).toEqual({ committed: false, skipped: true });
    await expect(broken.result).rejects.toMatchObject({ code: 'SQLITE_CONSTRAINT_PRIMARYKEY' });
    expect(await afterBroken.result).toEqual({ committed: false, skipped: true });
    expect(rows(sqlite)).toEqual([
      { id: 1, v: 'a' },
      { id: 2, v: 'b' },
    ]);
    await sqlite.stopBackgroundWork();
    sqlite.kysely.close();
  });

  it('a thread that was stopped is no longer offered, and rejects what it is still given', async () => {
    const sqlite = openSqliteFile(file(), 5000);
    const writer = setup(sqlite);
    expect(await writer.run([insert('[[1,"a"]]')]).result).toEqual({ committed: true, changes: [1] });
    writer.stopNow();
    expect(writer.usable).toBe(false);
    expect(sqlite.writer()).toBeUndefined();
    await expect(writer.run([insert('[[2,"b"]]')]).result).rejects.toThrow('stopped');
    expect(rows(sqlite)).toEqual([{ id: 1, v: 'a' }]);
    sqlite.kysely.close();
  });

  it('there is no thread for :memory:', () => {
    const sqlite = openSqliteFile(':memory:', 5000);
    expect(sqlite.writer()).toBeUndefined();
    sqlite.kysely.close();
  });
});

describe('SQLite WAL checkpoints on a background thread', () => {
  it('a small database checkpoints inline and never starts a thread', async () => {
    const path = file();
    const sqlite = openSqliteFile(path, 5000);
    write(sqlite, 1);
    await new Promise((r) => setTimeout(r, 1200));
    expect(autocheckpoint(sqlite)).toBe(10_000);
    await sqlite.stopBackgroundWork();
    sqlite.kysely.close();
    expect(existsSync(`${path}-wal`)).toBe(false);
  });

  it('once the WAL grows, a thread copies it into the database while the connection never checkpoints inline', async () => {
    const path = file();
    const sqlite = openSqliteFile(path, 5000);
    write(sqlite, 5);
    // The thread has started and taken over: the connection's own threshold moved to the safety valve.
    await until(() => autocheckpoint(sqlite) === 100_000, 'the checkpoint thread');
    const before = statSync(path).size;
    write(sqlite, 20);
    // 20 MiB is far below the connection's inline threshold (100,000 pages), so only the thread can
    // have copied the new pages into the database file.
    await until(() => statSync(path).size >= before + 20 * 1024 * 1024, 'pages copied by the thread');
    await sqlite.stopBackgroundWork();
    sqlite.kysely.close();
    // The thread's connection was closed first, so this last one checkpointed and removed the WAL.
    expect(existsSync(`${path}-wal`)).toBe(false);
  });

  it('a running thread does not keep the process alive', async () => {
    const module = fileURLToPath(new URL('../src/dialects/sqlite/sqlite-database.ts', import.meta.url));
    const script = `
      const { openSqliteFile } = await import(${JSON.stringify(module)});
      const sqlite = openSqliteFile(${JSON.stringify(file())}, 5000);
      sqlite.database.exec('CREATE TABLE filler (id INTEGER PRIMARY KEY, body BLOB)');
      const insert = sqlite.database.prepare('INSERT INTO filler (body) VALUES (?)');
      sqlite.database.transaction(() => { for (let i = 0; i < 400; i++) insert.run(Buffer.alloc(16384)); })();
      const started = Date.now();
      const wait = setInterval(() => {
        if (sqlite.database.pragma('wal_autocheckpoint', { simple: true }) === 100000) {
          clearInterval(wait);
          console.log('thread running');
        } else if (Date.now() - started > 10000) { clearInterval(wait); console.log('no thread'); }
      }, 50);
    `;
    const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => {
      out += chunk.toString();
    });
    const code = await new Promise<number | null>((resolve, reject) => {
      const timer = setTimeout(() => {
        child.kill('SIGKILL');
        reject(new Error('the process did not exit on its own'));
      }, 20_000);
      child.once('exit', (exitCode) => {
        clearTimeout(timer);
        resolve(exitCode);
      });
    });
    expect(out.trim()).toBe('thread running');
    expect(code).toBe(0);
  });
});
