import { crashPauseScenario } from './support/crash-pause-scenario.js';
import { postgresTarget } from './support/postgres-target.js';

/**
 * Issue 31's SIGKILL-while-paused scenario (test/support/crash-pause-scenario.ts) through PgBouncer in
 * transaction mode (issue 42): the pause, the claims and the fenced completions of killed workers hold
 * when consecutive statements may run on different server connections.
 */
crashPauseScenario(await postgresTarget('pgbouncer'));
