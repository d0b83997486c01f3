import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Store } from '@mailroom/core';
import { memoryStore } from '@mailroom/memory';
import { sqlStore } from '@mailroom/sql';
import pg from 'pg';
import { machineTicks } from './machine-cpu.js';

/** A store made for one benchmark run, and how to throw its data away afterwards. */
export interface BenchStore {
  store: Store;
  drop: () => Promise<void>;
}

const PG = process.env.MAILROOM_BENCH_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

/** The stores the store benchmarks compare; memory is the reference. */
export const BENCH_STORES: Array<[string, () => Promise<BenchStore>]> = [
  ['memory', async () => ({ store: memoryStore(), drop: async () => {} })],
  [
    'sqlite',
    async () => {
      const dir = mkdtempSync(join(tmpdir(), 'mailroom-bench-'));
      return {
        store: sqlStore({ url: join(dir, 'bench.db') }),
        drop: async () => rmSync(dir, { recursive: true }),
      };
    },
  ],
  ['postgres', postgresStore],
];

/** A store on a fresh PostgreSQL schema of its own, dropped afterwards. */
async function postgresStore(): Promise<BenchStore> {
  const schema = `bench_${Date.now().toString(36)}`;
  const admin = new pg.Client({ connectionString: PG });
  await admin.connect();
  await admin.query(`create schema ${schema}`);
  const url = new URL(PG);
  url.searchParams.set('options', `-c search_path=${schema}`);
  return {
    store: sqlStore({ url: url.toString() }),
    drop: async () => {
      await admin.query(`drop schema ${schema} cascade`);
      await admin.end();
    },
  };
}

/** How busy the host was while a store benchmark ran: its figures are only as steady as this. */
export interface HostLoad {
  /** 1, 5 and 15 minute load averages at the end. */
  loadAverage: number[];
  /** Share of all CPU time the hypervisor gave to other guests meanwhile (Linux `steal`), in percent. */
  stealPercent: number;
}

/** Starts watching the host; call the result at the end of the run. */
export function watchHost(): () => HostLoad {
  const start = machineTicks();
  return () => {
    const end = machineTicks();
    const total = end.all - start.all;
    return {
      loadAverage: loadavg().map((l) => +l.toFixed(2)),
      stealPercent: total > 0 ? +((100 * (end.steal - start.steal)) / total).toFixed(1) : 0,
    };
  };
}
