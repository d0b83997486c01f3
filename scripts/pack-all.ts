/**
 * `pnpm pack:all [folder]`: builds every package and writes its tarball to `folder` (default `.packs/`)
 * as `mailroom-<name>.tgz`, the file an app installs (README, "Use it in your app"). pnpm packs the
 * manifest as it would publish it: `workspace:` ranges become versions and `publishConfig.exports`
 * replaces `exports`, so the tarball never names the `mailroom-source` condition or `src/`.
 * test/package-publish.test.ts runs this script and installs its tarballs.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { basename, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

/** pnpm as this script was started (`pnpm pack:all`), else the pinned one through npx. */
function pnpm(args: string[]): void {
  const execPath = process.env.npm_execpath;
  const [command, prefix] =
    execPath && /pnpm/.test(basename(execPath))
      ? [process.execPath, [execPath]]
      : ['npx', ['--yes', 'pnpm@10']];
  execFileSync(command, [...prefix, ...args], { cwd: ROOT, stdio: 'inherit' });
}

/** The tarball file name pnpm writes for a package: `@mailroom/core@0.1.0` is `mailroom-core-0.1.0.tgz`. */
function packedName(dir: string): { from: string; to: string } {
  const { name, version } = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as {
    name: string;
    version: string;
  };
  const flat = name.replace(/^@/, '').replace('/', '-');
  return { from: `${flat}-${version}.tgz`, to: `${flat}.tgz` };
}

/** Builds, packs and renames; returns the tarballs' paths. */
function packAll(destination: string): string[] {
  const out = resolve(destination);
  const staging = join(out, '.staging');
  rmSync(staging, { recursive: true, force: true });
  mkdirSync(staging, { recursive: true });
  pnpm(['-r', '--filter', './packages/*', 'build']);
  pnpm(['-r', '--filter', './packages/*', 'pack', '--pack-destination', staging]);
  const written: string[] = [];
  for (const name of readdirSync(join(ROOT, 'packages')).sort()) {
    const { from, to } = packedName(join(ROOT, 'packages', name));
    renameSync(join(staging, from), join(out, to));
    written.push(join(out, to));
  }
  rmSync(staging, { recursive: true, force: true });
  return written;
}

const files = packAll(process.argv[2] ?? join(ROOT, '.packs'));
process.stdout.write(`${files.join('\n')}\n`);
