import { randomBytes } from 'node:crypto';
import pg from 'pg';

/** Runs `fn` with an admin connection to the PostgreSQL server at `base` (schemas of a test's own). */
export async function pgAdmin<T>(base: string, fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: base });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

/** A fresh schema of its own on the server at `base`: the URL that uses it, and how to drop it. */
export async function pgTestSchema(
  base: string,
  prefix: string,
): Promise<{ url: string; drop(): Promise<void> }> {
  const schema = `${prefix}_${Date.now().toString(36)}_${randomBytes(3).toString('hex')}`;
  await pgAdmin(base, (client) => client.query(`CREATE SCHEMA ${schema}`));
  const url = new URL(base);
  url.searchParams.set('options', `-c search_path=${schema}`);
  return {
    url: url.toString(),
    drop: () =>
      pgAdmin(base, (client) => client.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`)).then(() => {}),
  };
}
