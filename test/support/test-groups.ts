/**
 * How the test files are grouped and ordered (vitest.config.ts). Globs, so that a new file joins its
 * group by its name, without an edit here.
 */
import { type Dirent, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** Each package's own tests (`test:unit`): one worker process runs several files, modules loaded once. */
export const UNIT_TESTS = ['packages/*/test/**/*.test.ts'];

/**
 * The package tests that replace a module (`vi.mock`): they need a fresh process of their own, since a
 * worker that keeps its modules would hand them the real one loaded by an earlier file. Found by
 * reading the files, so that a new one needs no edit here.
 */
export const MOCKING_UNIT_TESTS = readdirSync(join(ROOT, 'packages')).flatMap((name) =>
  testFiles(join('packages', name, 'test')).filter((file) =>
    /\bvi\.(?:do)?[mM]ock\(/.test(readFileSync(join(ROOT, file), 'utf8')),
  ),
);

/** The `*.test.ts` files under `dir` (relative to the root), in every folder below it. */
function testFiles(dir: string): string[] {
  let entries: Dirent[];
  try {
    entries = readdirSync(join(ROOT, dir), { withFileTypes: true });
  } catch {
    return [];
  }
  return entries.flatMap((entry) =>
    entry.isDirectory()
      ? entry.name === 'fixtures' || entry.name === 'node_modules'
        ? []
        : testFiles(join(dir, entry.name))
      : entry.name.endsWith('.test.ts')
        ? [join(dir, entry.name)]
        : [],
  );
}

/**
 * The tests across packages (`test:e2e`). Each starts its servers, stores and child processes in its
 * `beforeAll` and closes them in its `afterAll`, so a worker process runs several files and keeps the
 * modules it loaded (the core's sources, the drivers, Fastify, Express) for the next one, as `unit` does.
 */
export const E2E_TESTS = ['test/**/*.test.ts', 'examples/*/test/**/*.test.ts'];

/**
 * What a test file may change in its process that the next file in the same worker would see: a mocked
 * module, the environment, a process-wide listener, the working directory, faked timers or globals.
 */
const CHANGES_ITS_PROCESS =
  /\bvi\.(?:do)?[mM]ock\(|\bvi\.stub(?:Env|Global)\(|\bvi\.useFakeTimers\(|process\.env(?:\.\w+|\[[^\]]+\])\s*(?:=(?!=)|\?\?=|\|\|=)|delete process\.env|process\.(?:on|once|chdir|setUncaughtExceptionCaptureCallback)\(/;

/**
 * The e2e files that change their process (see {@link CHANGES_ITS_PROCESS}): a fresh worker each, like
 * {@link MOCKING_UNIT_TESTS}. Found by reading the files, so that a new one needs no edit here.
 */
export const FRESH_E2E_TESTS = [
  'test',
  ...subfolders('examples').map((name) => join('examples', name, 'test')),
]
  .flatMap((dir) => testFiles(dir))
  .filter((file) => CHANGES_ITS_PROCESS.test(readFileSync(join(ROOT, file), 'utf8')));

/** The folders in `dir` (relative to the root). */
function subfolders(dir: string): string[] {
  try {
    return readdirSync(join(ROOT, dir), { withFileTypes: true })
      .filter((entry) => entry.isDirectory())
      .map((entry) => entry.name);
  } catch {
    return [];
  }
}

/**
 * Files that run alone, one after another, once all the others have finished: they assert on time
 * (latency within a bound, a send rate per second, a pause within its window, an outage's 503s within
 * its 10 s) or load the machine on purpose, so that files running beside them would make them slow or
 * flaky. Name a new file of that kind `*.exclusive.test.ts` (or match one of these globs).
 */
export const EXCLUSIVE_TESTS = [
  '**/*.exclusive.test.ts',
  // Not `engine-isolation` (projects that cannot see each other's data: no clock in it).
  'test/render-isolation*.test.ts',
  'test/webhooks-isolation*.test.ts',
  'test/*rate-limit*.test.ts',
  'test/pause-guard*.test.ts',
  'test/outage-*.test.ts',
  'test/webhooks-circuit.test.ts',
  'test/http-auth-limit.test.ts',
];

/**
 * The {@link EXCLUSIVE_TESTS} that need a fresh worker ({@link MOCKING_UNIT_TESTS}, {@link FRESH_E2E_TESTS}).
 * The files that run alone share one worker, one after another, so that the tail of the run does not
 * load the core's sources again for each; a file that changes its process among them gives each a fresh
 * worker again.
 */
export const FRESH_EXCLUSIVE_TESTS = [...MOCKING_UNIT_TESTS, ...FRESH_E2E_TESTS].filter((file) =>
  EXCLUSIVE_TESTS.some((glob) => globToRegExp(glob).test(file)),
);

/**
 * Files that take minutes, mostly waiting (leases running out, child processes, package installs):
 * started first, so that they run beside the many short files instead of after them. Elsewhere vitest's
 * order holds (the slowest first once it has timed a run, else the largest file first).
 */
export const LONG_TESTS = [
  'test/package-publish.test.ts',
  'test/crash-*.test.ts',
  'test/*-postgres*.test.ts',
  'packages/sql/test/postgres*.test.ts',
  'packages/sql/test/mysql*.test.ts',
  'packages/sql/test/concurrency.test.ts',
  'test/cli-*.test.ts',
  'test/app-transaction.test.ts',
  'test/request-caps-http.test.ts',
  'test/dependency-layers.test.ts',
  'test/destinations-acceptance.test.ts',
];

/** Vitest's sequencer, with the {@link LONG_TESTS} moved to the front (in their given order). */
export class LongFirstSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const rank = (spec: TestSpecification) => {
      const path = spec.moduleId.slice(spec.project.config.root.length + 1);
      const at = LONG_TESTS.findIndex((glob) => path.match(globToRegExp(glob)));
      return at < 0 ? LONG_TESTS.length : at;
    };
    // Array.prototype.sort is stable: vitest's order holds within each rank.
    return sorted.sort((a, b) => rank(a) - rank(b));
  }
}

/** A glob of `*` (within a folder) and `**` (any folders) as a regular expression on a relative path. */
function globToRegExp(glob: string): RegExp {
  const source = glob
    .split('**/')
    .map((part) => part.replace(/[.+?^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '[^/]*'))
    .join('(?:.*/)?');
  return new RegExp(`^${source}$`);
}
