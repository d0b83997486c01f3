import { availableParallelism } from 'node:os';
import { fileURLToPath } from 'node:url';
import { configDefaults, defineConfig } from 'vitest/config';
import {
  E2E_TESTS,
  EXCLUSIVE_TESTS,
  FRESH_E2E_TESTS,
  FRESH_EXCLUSIVE_TESTS,
  LongFirstSequencer,
  MOCKING_UNIT_TESTS,
  UNIT_TESTS,
} from './test/support/test-groups.js';

const src = (p: string) => fileURLToPath(new URL(`./packages/${p}`, import.meta.url));

/**
 * Test files at once (each in a fork of its own, with its own databases, ports and folders). Most files
 * wait on sockets, child processes and databases rather than the CPU, so there are more than cores.
 * `MAILROOM_TEST_WORKERS` overrides (1: one file at a time).
 */
const WORKERS = Number(process.env.MAILROOM_TEST_WORKERS) || Math.max(4, availableParallelism() * 2);

/**
 * `MAILROOM_TEST_ISOLATE=1`: every file in a fresh worker process, as `e2e:fresh` and `unit:mocking` are
 * (slower: each file loads its modules again); to tell a failure from state that a file left in its
 * worker from any other.
 */
const ISOLATE = process.env.MAILROOM_TEST_ISOLATE === '1';

// Tests run from the TypeScript sources: no build is needed on a clean clone.
export default defineConfig({
  resolve: {
    alias: [
      { find: /^@mailroom\/core\/testing$/, replacement: src('core/src/testing/index.ts') },
      { find: /^@mailroom\/core$/, replacement: src('core/src/index.ts') },
      { find: /^@mailroom\/memory$/, replacement: src('memory/src/index.ts') },
      { find: /^@mailroom\/sql$/, replacement: src('sql/src/index.ts') },
      { find: /^@mailroom\/smtp$/, replacement: src('smtp/src/index.ts') },
      { find: /^@mailroom\/ses$/, replacement: src('ses/src/index.ts') },
      { find: /^@mailroom\/http\/express$/, replacement: src('http/src/binders/express.ts') },
      { find: /^@mailroom\/http\/fastify$/, replacement: src('http/src/binders/fastify.ts') },
      { find: /^@mailroom\/http$/, replacement: src('http/src/index.ts') },
      { find: /^@mailroom\/cli$/, replacement: src('cli/src/index.ts') },
      { find: /^@mailroom\/client$/, replacement: src('client/src/index.ts') },
    ],
  },
  test: {
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // `MAILROOM_TEST_CPU_LOG=<file>`: each file's CPU, its children's and its wall time (BENCHMARKS.md).
    setupFiles: ['./test/support/cpu-per-file.ts'],
    sequence: { sequencer: LongFirstSequencer },
    // test/support/test-groups.ts: the files that may run beside others, `WORKERS` at a time (`unit` and
    // `e2e`, together), then those that must run alone, one at a time (`unit:alone`, `e2e:alone`: vitest
    // runs the projects of one worker last). Select with `--project` (`--project 'unit*'`: a package's
    // tests, both kinds).
    projects: [
      {
        extends: true,
        test: {
          name: 'unit',
          include: UNIT_TESTS,
          exclude: [...configDefaults.exclude, ...EXCLUSIVE_TESTS, ...MOCKING_UNIT_TESTS],
          maxWorkers: WORKERS,
          // A package's tests leave no server running after their file: a worker keeps the modules it
          // loaded (the core's sources, the drivers) for its next file instead of loading them again.
          isolate: ISOLATE,
        },
      },
      {
        extends: true,
        // Package tests that mock a module: a fresh worker each (see MOCKING_UNIT_TESTS).
        test: {
          name: 'unit:mocking',
          include: MOCKING_UNIT_TESTS.length > 0 ? MOCKING_UNIT_TESTS : ['no-such-file'],
          exclude: [...configDefaults.exclude, ...EXCLUSIVE_TESTS],
          maxWorkers: WORKERS,
        },
      },
      {
        extends: true,
        test: {
          name: 'e2e',
          include: E2E_TESTS,
          exclude: [...configDefaults.exclude, ...EXCLUSIVE_TESTS, ...FRESH_E2E_TESTS],
          maxWorkers: WORKERS,
          // Each file closes what it started in its afterAll: a worker keeps the modules it loaded for its
          // next file, as in `unit`.
          isolate: ISOLATE,
        },
      },
      {
        extends: true,
        // e2e files that change their process (env, mocks, process listeners): a fresh worker each.
        test: {
          name: 'e2e:fresh',
          include: FRESH_E2E_TESTS.length > 0 ? FRESH_E2E_TESTS : ['no-such-file'],
          exclude: [...configDefaults.exclude, ...EXCLUSIVE_TESTS],
          maxWorkers: WORKERS,
        },
      },
      ...(['unit', 'e2e'] as const).map((kind) => ({
        extends: true as const,
        test: {
          name: `${kind}:alone`,
          include: EXCLUSIVE_TESTS,
          exclude: [...configDefaults.exclude, ...(kind === 'unit' ? E2E_TESTS : UNIT_TESTS)],
          maxWorkers: 1,
          // One worker runs them one after another, keeping its modules: at the end of the run, where
          // nothing else runs, loading the sources again for each file would be wall time.
          isolate: ISOLATE || FRESH_EXCLUSIVE_TESTS.length > 0,
          // After all the others (vitest runs a group once the groups before it have finished; an isolated
          // project of one worker would go last by itself, a shared one needs its group said).
          sequence: { groupOrder: 1 },
        },
      })),
    ],
  },
});
