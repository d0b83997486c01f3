import { availableParallelism } from 'node:os';
import { fileURLToPath } from 'node:url';
import { configDefaults, defineConfig } from 'vitest/config';

const src = (p: string) => fileURLToPath(new URL(`./packages/${p}`, import.meta.url));

/** Every test file of the repository. */
const ALL_TESTS = ['packages/*/test/**/*.test.ts', 'test/**/*.test.ts', 'examples/*/test/**/*.test.ts'];

/**
 * Files that run alone, one after another, after all others: they measure time (latency, isolation,
 * throughput, crash and recovery windows) or load the CPU on purpose, so files running beside them would
 * make them slow or flaky. A new file whose name matches joins them without an edit here.
 */
const EXCLUSIVE_TESTS = ['test/crash-*.test.ts', 'test/*isolation*.test.ts', 'test/outage-*.test.ts'];

/**
 * Workers for the other files. Most of the suite waits on sockets, child processes and databases rather
 * than the CPU, so it runs more files at once than there are cores (each in its own fork, each with its
 * own databases, ports and temporary folders). `MAILROOM_TEST_WORKERS` overrides.
 */
const WORKERS = Number(process.env.MAILROOM_TEST_WORKERS) || Math.max(4, availableParallelism() * 2);

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
    projects: [
      {
        extends: true,
        test: {
          name: 'parallel',
          include: ALL_TESTS,
          exclude: [...configDefaults.exclude, ...EXCLUSIVE_TESTS],
          maxWorkers: WORKERS,
        },
      },
      {
        extends: true,
        // maxWorkers 1 with the default group order: vitest runs these last, one file at a time.
        test: { name: 'exclusive', include: EXCLUSIVE_TESTS, maxWorkers: 1 },
      },
    ],
  },
});
