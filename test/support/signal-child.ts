/**
 * A process that stops as the CLI does (`onSignals`), for test/cli-signals.test.ts: prints `armed`, and on
 * the first signal `stopping`, then exits 0 after 3 s (a graceful stop that takes its time).
 */
import { onSignals } from '../../packages/cli/src/output/io.js';

onSignals(() => {
  process.stdout.write('stopping\n');
  setTimeout(() => process.exit(0), 3000);
});
process.stdout.write('armed\n');
setInterval(() => {}, 1000);
