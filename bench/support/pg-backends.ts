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

/**
 * The URL the run's `mailroom worker` processes get: their backends are named `<schema>_workers`, so that
 * {@link backendCpu} tells PostgreSQL's CPU for them (claims, outcomes) from serve's (the accept).
 */
export function workersUrl(url: string): string {
  const named = new URL(url);
  named.searchParams.set('application_name', `${schemaOf(url)}_workers`);
  return named.toString();
}

/**
 * CPU of the run's PostgreSQL backends (those whose application_name is the schema, or the schema's
 * workers' name of {@link workersUrl}), sampled.
 */
export function backendCpu(url: string) {
  const admin = new URL(url);
  admin.searchParams.delete('options');
  admin.searchParams.delete('application_name');
  const client = new pg.Client({ connectionString: admin.toString() });
  const seen = new Map<number, { first: number; last: number; workers: boolean }>();
  let stopped = false;
  const sample = async () => {
    const { rows } = await client.query<{ pid: number; workers: boolean }>(
      'SELECT pid, application_name = $2 AS workers FROM pg_stat_activity WHERE application_name IN ($1, $2)',
      [schemaOf(url), `${schemaOf(url)}_workers`],
    );
    for (const { pid, workers } of rows) {
      let cpu: number;
      try {
        cpu = processCpuMicros(pid);
      } catch {
        continue;
      }
      const entry = seen.get(pid);
      if (entry) entry.last = cpu;
      else seen.set(pid, { first: cpu, last: cpu, workers });
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
    /** After {@link stop}: of the microseconds it returned, those of the workers' backends. */
    workersMicros(): number {
      let total = 0;
      for (const { first, last, workers } of seen.values()) if (workers) total += last - first;
      return total;
    },
  };
}
