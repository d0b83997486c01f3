import { concurrentWorkersScenario } from './support/concurrent-workers-scenario.js';
import { postgresTarget } from './support/postgres-target.js';

/**
 * Four concurrent workers on one PostgreSQL database through PgBouncer in transaction mode (issue 42):
 * claims with `FOR UPDATE SKIP LOCKED` and fenced completions, exactly once, with no session state.
 */
concurrentWorkersScenario(await postgresTarget('pgbouncer'));
