import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';

// The layer rules of .dependency-cruiser.cjs, run on a small copy of the core's shape: an import against the
// ranks must fail the check, a declared sideways import must pass. (The real tree is checked by the test
// command itself, before vitest.)
const run = promisify(execFile);
const repo = resolve(import.meta.dirname, '..');
const depcruise = join(repo, 'node_modules/.bin/depcruise');
const dirs: string[] = [];

/** Writes `files` (path under `src`, by default the core's -> source) into a fresh tree and cruises it. */
async function cruise(
  files: Record<string, string>,
  src = 'packages/core/src',
): Promise<{ ok: boolean; output: string }> {
  const dir = mkdtempSync(join(tmpdir(), 'mailroom-layers-'));
  dirs.push(dir);
  writeFileSync(join(dir, 'tsconfig.json'), JSON.stringify({ compilerOptions: { strict: true } }));
  for (const [path, source] of Object.entries(files)) {
    const file = join(dir, src, path);
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, source);
  }
  const args = ['packages', '--config', join(repo, '.dependency-cruiser.cjs'), '--output-type', 'err'];
  try {
    const { stdout, stderr } = await run(depcruise, args, { cwd: dir });
    return { ok: true, output: stdout + stderr };
  } catch (error) {
    const failed = error as { stdout?: string; stderr?: string };
    return { ok: false, output: `${failed.stdout ?? ''}${failed.stderr ?? ''}` };
  }
}

const leaf = 'export const value = 1;\n';

afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

describe('the core layers (.dependency-cruiser.cjs)', () => {
  it('passes imports that point down and declared sideways ones', async () => {
    const result = await cruise({
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
    });
    expect(result.output).toContain('no dependency violations');
    expect(result.ok).toBe(true);
  });

  it('fails a ground folder that imports a capability', async () => {
    const result = await cruise({
      'delivery/worker.ts': leaf,
      'base/secrets.ts': "import { value } from '../delivery/worker.js';\nexport const secret = value;\n",
    });
    expect(result.ok).toBe(false);
    expect(result.output).toContain('core-layers-base');
  });

  it('fails the context importing a capability, and a capability importing the engine', async () => {
    const result = await cruise({
      'keys/key-scope.ts': leaf,
      'engine/create-mailroom.ts': leaf,
      'context/auth-context.ts':
        "import { value } from '../keys/key-scope.js';\nexport const auth = value;\n",
      'admin/admin.ts':
        "import { value } from '../engine/create-mailroom.js';\nexport const admin = value;\n",
    });
    expect(result.ok).toBe(false);
    expect(result.output).toContain('core-layers-context');
    expect(result.output).toContain('core-layers-admin');
  });

  it('fails a sideways import between capabilities that SIDEWAYS does not declare', async () => {
    const result = await cruise({
      'webhooks/webhook-sender.ts': leaf,
      'tracking/tracking.ts':
        "import { value } from '../webhooks/webhook-sender.js';\nexport const t = value;\n",
    });
    expect(result.ok).toBe(false);
    expect(result.output).toContain('core-layers-tracking');
  });

  it('fails a declared sideways import taken the other way round (delivery -> inbound, not back)', async () => {
    const result = await cruise({
      'delivery/worker.ts': leaf,
      'inbound/inbound-effects.ts':
        "import { value } from '../delivery/worker.js';\nexport const e = value;\n",
    });
    expect(result.ok).toBe(false);
    expect(result.output).toContain('core-layers-inbound');
  });
});

describe('the http and cli folders (PACKAGE_RANKS in .dependency-cruiser.cjs)', () => {
  it('passes imports that point down, from the entries at the root to the lowest folder', async () => {
    const http = await cruise(
      {
        'neutral/types.ts': leaf,
        'routes/routes.ts': "import { value } from '../neutral/types.js';\nexport const r = value;\n",
        'handler/handler.ts': "import { r } from '../routes/routes.js';\nexport const h = r;\n",
        'index.ts': "export { h } from './handler/handler.js';\n",
      },
      'packages/http/src',
    );
    expect(http.output).toContain('no dependency violations');
    const cli = await cruise(
      {
        'output/io.ts': leaf,
        'flags/args.ts': "import { value } from '../output/io.js';\nexport const a = value;\n",
        'commands/commands.ts': "import { a } from '../flags/args.js';\nexport const c = a;\n",
        'main.ts': "export { c } from './commands/commands.js';\n",
      },
      'packages/cli/src',
    );
    expect(cli.output).toContain('no dependency violations');
  });

  it('fails a folder that imports one of its own rank or above, or an entry at the root', async () => {
    const http = await cruise(
      {
        'routes/routes.ts': leaf,
        'openapi/openapi.ts': leaf,
        'neutral/responses.ts': "import { value } from '../routes/routes.js';\nexport const r = value;\n",
        'metrics/metrics.ts': "import { value } from '../openapi/openapi.js';\nexport const m = value;\n",
      },
      'packages/http/src',
    );
    expect(http.ok).toBe(false);
    expect(http.output).toContain('http-layers-neutral');
    expect(http.output).toContain('http-layers-metrics');
    const cli = await cruise(
      {
        'main.ts': leaf,
        'admin/admin-target.ts': leaf,
        'server/open-engine.ts':
          "import { value } from '../admin/admin-target.js';\nexport const o = value;\n",
        'output/io.ts': "import { value } from '../main.js';\nexport const io = value;\n",
      },
      'packages/cli/src',
    );
    expect(cli.ok).toBe(false);
    expect(cli.output).toContain('cli-layers-server');
    expect(cli.output).toContain('cli-root-is-the-entry');
  });
});
