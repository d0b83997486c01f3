/**
 * The PostgreSQL backends of one bench run, for `pg-cost` and `pg-workers`: the run's URL names its schema
 * (`options=-c search_path=<schema>`) and its connections (`application_name=<schema>`, set by
 * `serve-run.ts`), so their CPU can be read from /proc whatever else the server does.
 */
import pg from 'pg';
import { processCpuMicros } from './cli-process.js';

/** The schema a bench URL names (`options=-c search_path=<schema>`). */
export function schemaOf(url: string): string {
  const options = new URL(url).searchParams.get('options') ?? '';
  const schema = /search_path=(\w+)/.exec(options)?.[1];
  if (!schema) throw new Error(`no schema in ${url}`);
  return schema;
}

/** CPU of the run's PostgreSQL backends (those whose application_name is the schema), sampled. */
export function backendCpu(url: string) {
  const admin = new URL(url);
  admin.searchParams.delete('options');
  admin.searchParams.delete('application_name');
  const client = new pg.Client({ connectionString: admin.toString() });
  const seen = new Map<number, { first: number; last: number }>();
  let stopped = false;
  const sample = async () => {
    const { rows } = await client.query<{ pid: number }>(
      'SELECT pid FROM pg_stat_activity WHERE application_name = $1',
      [schemaOf(url)],
    );
    for (const { pid } of rows) {
      let cpu: number;
      try {
        cpu = processCpuMicros(pid);
      } catch {
        continue;
      }
      const entry = seen.get(pid);
      if (entry) entry.last = cpu;
      else seen.set(pid, { first: cpu, last: cpu });
    }
  };
  const started = (async () => {
    await client.connect();
    await sample();
    while (!stopped) {
      await new Promise((r) => setTimeout(r, 200));
      await sample();
    }
  })();
  return {
    /** Microseconds of CPU the backends used since the start. */
    async stop(): Promise<number> {
      stopped = true;
      await started;
      await client.end();
      let total = 0;
      for (const { first, last } of seen.values()) total += last - first;
      return total;
    },
  };
}
