import Database from 'better-sqlite3';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { sqlStore } from '../src/index.js';
import { testDatabases } from './support/databases.js';

/**
 * The reads of `GET /broadcasts`, `GET /broadcasts/:ref`, `GET /messages/:ref` and the audience listings
 * (issue 26) are served by an index on SQLite and PostgreSQL: none reads a whole table, so status reads
 * stay cheap while a large broadcast writes its deliveries. Each statement is the one its store method
 * runs; its plan must name the index given (SQLite) or hold no sequential scan when PostgreSQL is told to
 * avoid them where it can (a statement no index can serve still shows one).
 */
const READS: ReadonlyArray<{
  what: string;
  sql: string;
  params: unknown[];
  sqliteIndex: RegExp;
  /** The statement as the store runs it on PostgreSQL, where it differs (migration 034's `open_at`). */
  pgSql?: string;
  /** The index PostgreSQL must use, where it matters which. */
  pgIndex?: RegExp;
}> = [
  {
    what: 'getMailing',
    sql: 'SELECT * FROM mailroom_mailings WHERE project_id = ? AND ref = ?',
    params: ['prj', 'bc'],
    sqliteIndex: /mailroom_mailings_project_ref|sqlite_autoindex_mailroom_mailings/,
  },
  {
    what: 'listMailings',
    sql: 'SELECT * FROM mailroom_mailings WHERE project_id = ? AND kind = ? ORDER BY created_at DESC, id DESC LIMIT ?',
    params: ['prj', 'broadcast', 21],
    sqliteIndex: /mailroom_mailings_listing/,
  },
  {
    what: 'countDeliveries',
    sql: 'SELECT status, COUNT(*) AS n FROM mailroom_deliveries WHERE mailing_id = ? GROUP BY status',
    params: ['mlg'],
    sqliteIndex: /COVERING INDEX mailroom_deliveries_mailing_status/,
  },
  {
    // After every flush of outcomes (completeMailingIfSettled): the open deliveries' own index on
    // PostgreSQL (migrations 027 and 034), which holds no settled delivery.
    what: 'is a delivery of the mailing still open',
    sql: "SELECT 1 AS open FROM mailroom_deliveries WHERE mailing_id = ? AND status IN ('queued', 'sending') LIMIT 1",
    pgSql:
      "SELECT 1 AS open FROM mailroom_deliveries WHERE mailing_id = ? AND open_at IS NOT NULL AND status IN ('queued', 'sending') LIMIT 1",
    params: ['mlg'],
    sqliteIndex: /mailroom_deliveries_mailing_status/,
    pgIndex: /mailroom_deliveries_mailing_open/,
  },
  {
    what: 'listDeliveries',
    sql: 'SELECT * FROM mailroom_deliveries WHERE mailing_id = ? ORDER BY address LIMIT ?',
    params: ['mlg', 101],
    sqliteIndex: /mailroom_deliveries_mailing_address|sqlite_autoindex_mailroom_deliveries/,
  },
  {
    what: 'getDelivery (by Message-ID)',
    sql: 'SELECT * FROM mailroom_deliveries WHERE id = ?',
    params: ['dlv'],
    sqliteIndex: /sqlite_autoindex_mailroom_deliveries_1|PRIMARY KEY/,
  },
  {
    what: 'listEvents of a delivery',
    // As the store writes it on SQLite: `+` keeps the planner off the project's index (see listEvents).
    sql: 'SELECT * FROM mailroom_events WHERE +project_id = ? AND delivery_id = ? ORDER BY id LIMIT ?',
    params: ['prj', 'dlv', 100],
    sqliteIndex: /mailroom_events_delivery/,
  },
  {
    what: 'listInboundSignals',
    sql: 'SELECT * FROM mailroom_inbound_signals WHERE delivery_id = ? ORDER BY created_at, id',
    params: ['dlv'],
    sqliteIndex: /mailroom_inbound_signals_delivery/,
  },
  {
    what: 'listSourceJobs',
    sql: 'SELECT * FROM mailroom_source_jobs WHERE mailing_id = ? ORDER BY created_at, id',
    params: ['mlg'],
    sqliteIndex: /mailroom_source_jobs_mailing/,
  },
  {
    what: 'listProfiles (prefix)',
    sql: 'SELECT * FROM mailroom_profiles WHERE project_id = ? AND address >= ? ORDER BY address LIMIT ?',
    params: ['prj', 'ann', 51],
    sqliteIndex: /sqlite_autoindex_mailroom_profiles/,
  },
  {
    what: 'listGroupMembers',
    sql: `SELECT p.* FROM mailroom_group_members gm
          JOIN mailroom_profiles p ON p.project_id = gm.project_id AND p.address = gm.address
          WHERE gm.group_id = ? AND gm.project_id = ? AND gm.address > ? ORDER BY gm.address LIMIT ?`,
    params: ['grp', 'prj', 'a', 51],
    sqliteIndex: /sqlite_autoindex_mailroom_group_members/,
  },
  {
    what: 'open broadcasts (the fair claim, issue 36)',
    sql: "SELECT id, project_id, schedule_for FROM mailroom_mailings WHERE kind = 'broadcast' AND status IN ('queued', 'scheduled', 'sending')",
    params: [],
    sqliteIndex: /mailroom_mailings_open/,
  },
  {
    what: "a project's share of a claim, from one mailing (issue 36)",
    sql: "SELECT d.id FROM mailroom_deliveries d WHERE d.mailing_id = ? AND d.status = 'queued' AND d.priority = 1 AND d.next_attempt_at <= ? LIMIT ?",
    pgSql:
      "SELECT d.id FROM mailroom_deliveries d WHERE d.mailing_id = ? AND d.open_at IS NOT NULL AND d.status = 'queued' AND d.priority = 1 AND d.next_attempt_at <= ? LIMIT ?",
    params: ['mlg', 0, 10],
    sqliteIndex: /mailroom_deliveries_mailing_status/,
    pgIndex: /mailroom_deliveries_mailing_open/,
  },
];

describe('status and audience reads are indexed', () => {
  const sqlite = testDatabases('sqlite');
  if (sqlite) {
    it('on SQLite, each read searches the index named, never scans a table', async () => {
      const url = await sqlite.create();
      const store = sqlStore({ url });
      await store.init();
      await store.close();
      const db = new Database(url.slice('sqlite:'.length), { readonly: true });
      try {
        for (const read of READS) {
          const plan = db
            .prepare(`EXPLAIN QUERY PLAN ${read.sql}`)
            .all(...read.params)
            .map((row) => String((row as { detail: string }).detail));
          const text = plan.join(' | ');
          expect(text, read.what).toMatch(read.sqliteIndex);
          expect(text, read.what).not.toMatch(/SCAN mailroom_\w+(?! USING)/);
        }
      } finally {
        db.close();
      }
    });
  }

  const postgres = testDatabases('postgres');
  if (postgres) {
    it('on PostgreSQL, no read needs a sequential scan', async () => {
      const url = await postgres.create();
      const store = sqlStore({ url });
      await store.init();
      await store.close();
      const client = new pg.Client({ connectionString: url });
      await client.connect();
      try {
        await client.query('SET enable_seqscan = off');
        for (const read of READS) {
          let n = 0;
          const text = (read.pgSql ?? read.sql)
            .replace('+project_id', 'project_id')
            .replace(/\?/g, () => `$${++n}`);
          const result = await client.query<{ 'QUERY PLAN': string }>(`EXPLAIN ${text}`, read.params);
          const plan = result.rows.map((row) => row['QUERY PLAN']).join('\n');
          if (process.env.SHOW_PLANS) console.log(read.what, plan);
          expect(plan, read.what).not.toMatch(/Seq Scan/);
          expect(plan, read.what).toMatch(read.pgIndex ?? /Index/);
        }
      } finally {
        await client.end();
      }
    });
  }
});
