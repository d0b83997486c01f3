import { concurrentWorkersScenario } from './support/concurrent-workers-scenario.js';
import { postgresTarget } from './support/postgres-target.js';

/** Four concurrent workers on one PostgreSQL database, directly (test/support/concurrent-workers-scenario.ts). */
concurrentWorkersScenario(await postgresTarget('direct'));
