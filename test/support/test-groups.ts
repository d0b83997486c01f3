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

/** The tests across packages (`test:e2e`): each file in a fresh process, as the servers they start want. */
export const E2E_TESTS = ['test/**/*.test.ts', 'examples/*/test/**/*.test.ts'];

/**
 * Files that run alone, one after another, once all the others have finished: they assert on time
 * (latency within a bound, a send rate per second, a pause within its window, an outage's 503s within
 * its 10 s) or load the machine on purpose, so that files running beside them would make them slow or
 * flaky. Name a new file of that kind `*.exclusive.test.ts` (or match one of these globs).
 */
export const EXCLUSIVE_TESTS = [
  '**/*.exclusive.test.ts',
  'test/*isolation*.test.ts',
  'test/*rate-limit*.test.ts',
  'test/pause-guard*.test.ts',
  'test/outage-*.test.ts',
  'test/webhooks-circuit.test.ts',
  'test/http-auth-limit.test.ts',
  'packages/core/test/bounce-*.test.ts',
  'packages/core/test/request-robustness.test.ts',
  'packages/core/test/request-attachments.test.ts',
  'packages/core/test/render-content-source.test.ts',
];

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
