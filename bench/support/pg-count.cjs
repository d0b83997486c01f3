/**
 * Preloaded (`node --require`) into the `mailroom serve` and `worker` processes of `pg-cost` when
 * BENCH_PG_COUNT_DIR is set: counts what the process sends PostgreSQL through `pg` (the driver the store
 * loads), since `pg_stat_statements` needs a server restart. A round trip is one `Client.query` call (pg
 * sends a query's parse, bind and execute at once and waits for its answer); a statement is one SQL
 * statement (a script of several, `runner.script`, is one round trip and several statements). Counted from
 * SIGUSR2 (the benchmark's start mark) and written at exit as `<pid>.json` in the folder: totals and the round trips per statement shape (its first words).
 */
const { createRequire } = require('node:module');
const { writeFileSync } = require('node:fs');
const { join } = require('node:path');

const dir = process.env.BENCH_PG_COUNT_DIR;
const pg = createRequire(join(__dirname, '../../packages/sql/package.json'))('pg');
const counts = { roundTrips: 0, statements: 0, shapes: {} };

/** A statement's shape: its first words, literals and placeholders out, so that shapes group. */
function shapeOf(text) {
  return text
    .replace(/\s+/g, ' ')
    .replace(/\$\d+|'[^']*'|\b\d+\b/g, '?')
    .trim()
    .slice(0, 90);
}

const query = pg.Client.prototype.query;
pg.Client.prototype.query = function countedQuery(config, values, callback) {
  const text = typeof config === 'string' ? config : config?.text;
  if (typeof text === 'string') {
    counts.roundTrips++;
    const statements = text.split(/;\s*\n/).filter((s) => s.trim() !== '');
    counts.statements += statements.length;
    const shape = statements.map(shapeOf).join(' ; ');
    counts.shapes[shape] = (counts.shapes[shape] ?? 0) + 1;
  }
  return query.call(this, config, values, callback);
};

// The benchmark marks the start of what it measures (after start-up and migrations) with SIGUSR2.
process.on('SIGUSR2', () => {
  counts.roundTrips = 0;
  counts.statements = 0;
  counts.shapes = {};
});

process.on('exit', () => {
  if (dir) writeFileSync(join(dir, `${process.pid}.json`), JSON.stringify(counts));
});
