import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

// The layer rules of .dependency-cruiser.cjs, run on small copies of the core's shape: an import against the
// ranks must fail the check, a declared sideways import must pass. (The real tree is checked by the test
// command itself, before vitest.) Every tree is written first and cruised by the CLI in one process
// (test/support/depcruise-trees.ts: the CLI's entry per tree, as `depcruise packages --config ...
// --output-type err` in the tree's folder), not one CLI process per tree (each loads TypeScript again).
const run = promisify(execFile);
const repo = resolve(import.meta.dirname, '..');
const dirs: string[] = [];

/** A tree: files by path under `src` (by default the core's -> source). */
interface Tree {
  files: Record<string, string>;
  src?: string;
}

/** The CLI's verdict on each tree, by the tree's object, once {@link cruiseAll} ran. */
const verdicts = new Map<Tree, { ok: boolean; output: string }>();

/** Writes each tree into a fresh folder (with a strict tsconfig) and cruises them all in one process. */
async function cruiseAll(trees: readonly Tree[]): Promise<void> {
  for (const { files, src = 'packages/core/src' } of trees) {
    const dir = mkdtempSync(join(tmpdir(), 'mailroom-layers-'));
    dirs.push(dir);
    writeFileSync(join(dir, 'tsconfig.json'), JSON.stringify({ compilerOptions: { strict: true } }));
    for (const [path, source] of Object.entries(files)) {
      const file = join(dir, src, path);
      mkdirSync(dirname(file), { recursive: true });
      writeFileSync(file, source);
    }
  }
  const { stdout } = await run(
    process.execPath,
    [
      '--import',
      'tsx',
      join(repo, 'test/support/depcruise-trees.ts'),
      join(repo, '.dependency-cruiser.cjs'),
      ...dirs,
    ],
    { cwd: repo, maxBuffer: 16 * 1024 * 1024 }, // where `--import tsx` resolves
  );
  const results: { dir: string; code: number; output: string }[] = JSON.parse(stdout);
  expect(results.map((r) => r.dir)).toEqual(dirs);
  for (const [i, tree] of trees.entries()) {
    const result = results[i];
    if (result) verdicts.set(tree, { ok: result.code === 0, output: result.output });
  }
}

/** The CLI's verdict on `tree` (one of {@link TREES}). */
function cruise(tree: Tree): { ok: boolean; output: string } {
  const verdict = verdicts.get(tree);
  if (!verdict) throw new Error('tree not cruised: add it to TREES');
  return verdict;
}

const leaf = 'export const value = 1;\n';

/** Every tree the cases below judge, cruised together before them. */
const TREES = {
  coreDownAndSideways: {
    files: {
      'base/errors.ts': leaf,
      'store/records.ts': "import { value } from '../base/errors.js';\nexport const records = value;\n",
      'context/base-context.ts':
        "import { records } from '../store/records.js';\nexport const ctx = records;\n",
      'inbound/refusal-reason.ts':
        "import { ctx } from '../context/base-context.js';\nexport const reason = ctx;\n",
      'delivery/worker.ts':
        "import { reason } from '../inbound/refusal-reason.js';\nexport const worker = reason;\n",
      'engine/create-mailroom.ts':
        "import { worker } from '../delivery/worker.js';\nexport const engine = worker;\n",
    },
  },
  groundImportsCapability: {
    files: {
      'delivery/worker.ts': leaf,
      'base/secrets.ts': "import { value } from '../delivery/worker.js';\nexport const secret = value;\n",
    },
  },
  contextAndCapabilityUpwards: {
    files: {
      'keys/key-scope.ts': leaf,
      'engine/create-mailroom.ts': leaf,
      'context/auth-context.ts':
        "import { value } from '../keys/key-scope.js';\nexport const auth = value;\n",
      'admin/admin.ts':
        "import { value } from '../engine/create-mailroom.js';\nexport const admin = value;\n",
    },
  },
  undeclaredSideways: {
    files: {
      'webhooks/webhook-sender.ts': leaf,
      'tracking/tracking.ts':
        "import { value } from '../webhooks/webhook-sender.js';\nexport const t = value;\n",
    },
  },
  sidewaysReversed: {
    files: {
      'delivery/worker.ts': leaf,
      'inbound/inbound-effects.ts':
        "import { value } from '../delivery/worker.js';\nexport const e = value;\n",
    },
  },
  httpDown: {
    files: {
      'neutral/types.ts': leaf,
      'routes/routes.ts': "import { value } from '../neutral/types.js';\nexport const r = value;\n",
      'handler/handler.ts': "import { r } from '../routes/routes.js';\nexport const h = r;\n",
      'index.ts': "export { h } from './handler/handler.js';\n",
    },
    src: 'packages/http/src',
  },
  cliDown: {
    files: {
      'output/io.ts': leaf,
      'flags/args.ts': "import { value } from '../output/io.js';\nexport const a = value;\n",
      'commands/commands.ts': "import { a } from '../flags/args.js';\nexport const c = a;\n",
      'main.ts': "export { c } from './commands/commands.js';\n",
    },
    src: 'packages/cli/src',
  },
  httpSameRankAndAbove: {
    files: {
      'routes/routes.ts': leaf,
      'openapi/openapi.ts': leaf,
      'neutral/responses.ts': "import { value } from '../routes/routes.js';\nexport const r = value;\n",
      'metrics/metrics.ts': "import { value } from '../openapi/openapi.js';\nexport const m = value;\n",
    },
    src: 'packages/http/src',
  },
  cliSameRankAndRoot: {
    files: {
      'main.ts': leaf,
      'admin/admin-target.ts': leaf,
      'server/open-engine.ts': "import { value } from '../admin/admin-target.js';\nexport const o = value;\n",
      'output/io.ts': "import { value } from '../main.js';\nexport const io = value;\n",
    },
    src: 'packages/cli/src',
  },
} satisfies Record<string, Tree>;

beforeAll(() => cruiseAll(Object.values(TREES)), 120_000);

afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

describe('the core layers (.dependency-cruiser.cjs)', () => {
  it('passes imports that point down and declared sideways ones', () => {
    const result = cruise(TREES.coreDownAndSideways);
    expect(result.output).toContain('no dependency violations');
    expect(result.ok).toBe(true);
  });

  it('fails a ground folder that imports a capability', () => {
    const result = cruise(TREES.groundImportsCapability);
    expect(result.ok).toBe(false);
    expect(result.output).toContain('core-layers-base');
  });

  it('fails the context importing a capability, and a capability importing the engine', () => {
    const result = cruise(TREES.contextAndCapabilityUpwards);
    expect(result.ok).toBe(false);
    expect(result.output).toContain('core-layers-context');
    expect(result.output).toContain('core-layers-admin');
  });

  it('fails a sideways import between capabilities that SIDEWAYS does not declare', () => {
    const result = cruise(TREES.undeclaredSideways);
    expect(result.ok).toBe(false);
    expect(result.output).toContain('core-layers-tracking');
  });

  it('fails a declared sideways import taken the other way round (delivery -> inbound, not back)', () => {
    const result = cruise(TREES.sidewaysReversed);
    expect(result.ok).toBe(false);
    expect(result.output).toContain('core-layers-inbound');
  });
});

describe('the http and cli folders (PACKAGE_RANKS in .dependency-cruiser.cjs)', () => {
  it('passes imports that point down, from the entries at the root to the lowest folder', () => {
    expect(cruise(TREES.httpDown).output).toContain('no dependency violations');
    expect(cruise(TREES.cliDown).output).toContain('no dependency violations');
  });

  it('fails a folder that imports one of its own rank or above, or an entry at the root', () => {
    const http = cruise(TREES.httpSameRankAndAbove);
    expect(http.ok).toBe(false);
    expect(http.output).toContain('http-layers-neutral');
    expect(http.output).toContain('http-layers-metrics');
    const cli = cruise(TREES.cliSameRankAndRoot);
    expect(cli.ok).toBe(false);
    expect(cli.output).toContain('cli-layers-server');
    expect(cli.output).toContain('cli-root-is-the-entry');
  });
});
