import { crashPauseScenario } from './support/crash-pause-scenario.js';
import { postgresTarget } from './support/postgres-target.js';

/** Issue 31's SIGKILL-while-paused scenario (test/support/crash-pause-scenario.ts) on PostgreSQL, directly. */
crashPauseScenario(await postgresTarget('direct'));
