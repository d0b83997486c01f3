/**
 * `pnpm build` (and the build step of `pnpm pack:all`): every package's `dist/` as its own `tsup` would
 * write it, with one type check for all of them. In order:
 * 1. each package's `generate` script, where it has one (the client's types from the HTTP API's
 *    document, which its sources import);
 * 2. the declarations of every package from one program (`declarations.ts`), in a child process, while
 *    this one builds the packages' ES modules (esbuild; they need no declarations: other packages'
 *    modules stay external);
 * 3. each package's `.d.ts` bundled from that program's output, all in one worker thread
 *    (`shared-dts-worker.ts`).
 * One package alone still builds with its own `tsup` (`pnpm --filter '@mailroom/cli...' build`).
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildModules, bundleDeclarations, entryFiles, packageOptions } from './package-build.js';
import { withSharedDtsWorker } from './shared-dts-worker.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** Builds every package under `packages/`. */
export async function buildPackages(): Promise<void> {
  const dirs = readdirSync(join(ROOT, 'packages'))
    .sort()
    .map((name) => join(ROOT, 'packages', name));
  for (const dir of dirs) {
    const { scripts } = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as {
      scripts?: Record<string, string>;
    };
    if (scripts?.generate) await run(pnpmCommand(['run', 'generate']), dir);
  }
  const packages = await Promise.all(dirs.map(async (dir) => ({ dir, options: await packageOptions(dir) })));
  const declarationsDir = mkdtempSync(join(tmpdir(), 'mailroom-declarations-'));
  try {
    const entries = packages.flatMap(({ dir, options }) =>
      entryFiles(options).map((file) => join(dir, file)),
    );
    const declarations = run(
      [
        process.execPath,
        '--import',
        'tsx',
        join(ROOT, 'scripts/build/emit-declarations.ts'),
        declarationsDir,
        ...entries,
      ],
      ROOT,
    );
    // Awaited below; a failure meanwhile is not unhandled.
    declarations.catch(() => {});
    for (const { dir, options } of packages) await buildModules(dir, options);
    await declarations;
    // One worker thread bundles every package's declarations (shared-dts-worker.ts).
    await withSharedDtsWorker(async () => {
      for (const { dir, options } of packages) await bundleDeclarations(dir, options, declarationsDir);
    });
  } finally {
    rmSync(declarationsDir, { recursive: true, force: true });
  }
}

/** pnpm as this process was started (`pnpm build`, `pnpm pack:all`), else the pinned one through npx. */
export function pnpmCommand(args: readonly string[]): string[] {
  const execPath = process.env.npm_execpath;
  return execPath && /pnpm/.test(execPath.split('/').at(-1) ?? '')
    ? [process.execPath, execPath, ...args]
    : ['npx', '--yes', 'pnpm@10', ...args];
}

/** Runs a command with this process's output; rejects unless it ends with 0. */
function run(command: readonly string[], cwd: string): Promise<void> {
  const [file, ...args] = command;
  if (!file) return Promise.reject(new Error('no command'));
  return new Promise((resolve, reject) => {
    const child = spawn(file, args, { cwd, stdio: 'inherit' });
    child.on('error', reject);
    child.on('close', (code, signal) =>
      code === 0
        ? resolve()
        : reject(new Error(`${command.slice(0, 3).join(' ')}: ${signal ?? `exit ${code}`}`)),
    );
  });
}
