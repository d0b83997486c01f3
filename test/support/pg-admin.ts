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
