/**
 * `pnpm pack:all [folder]`: builds every package and writes its tarball to `folder` (default `.packs/`)
 * as `mailroom-<name>.tgz`, the file an app installs (README, "Use it in your app"). pnpm packs the
 * manifest as it would publish it: `workspace:` ranges become versions and `publishConfig.exports`
 * replaces `exports`, so the tarball never names the `mailroom-source` condition or `src/`.
 * Beside them it writes `pnpm.json`, the `pnpm` settings of an app that installs them with pnpm (overrides
 * pointing every `@mailroom/*` name at its tarball, by absolute path, and better-sqlite3's build allowed),
 * and it ends by printing the `MAILROOM=...` line the README's app commands start with: the clone's
 * path, whatever the clone's folder is called. test/package-publish.test.ts runs this script and installs
 * its tarballs with the README's commands.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { basename, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildPackages, pnpmCommand } from './build/build-packages.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

/** pnpm as this script was started (`pnpm pack:all`), else the pinned one through npx. */
function pnpm(args: string[]): void {
  const [command = 'npx', ...rest] = pnpmCommand(args);
  execFileSync(command, rest, { cwd: ROOT, stdio: 'inherit' });
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

/** Builds (as `pnpm build`), packs and renames; returns the tarballs' paths. */
async function packAll(destination: string): Promise<string[]> {
  const out = resolve(destination);
  const staging = join(out, '.staging');
  rmSync(staging, { recursive: true, force: true });
  mkdirSync(staging, { recursive: true });
  await buildPackages();
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

/**
 * Versions an app holds back so that it installs on Node 20 without engine warnings (`EBADENGINE`): the
 * newest releases in the ranges our dependencies ask for declare Node >= 22 although nothing of ours needs
 * them there. `nopt` 10 (and its `abbrev` 5) come with js-beautify 2, which mjml 5.4.1 requires; they parse
 * js-beautify's own command line, which mjml never loads; 7.2 is what js-beautify 1.15 used.
 * `light-my-request` 6.8 (fastify's `inject`) brings `cookie` 2; 6.6 has the same API on `cookie` 1.
 * Written to `.packs/overrides.json` (npm's `overrides`) and into `pnpm.json`.
 */
const NODE20_OVERRIDES: Readonly<Record<string, string>> = {
  nopt: '^7.2.1',
  'light-my-request': '6.6.0',
};

/**
 * The `pnpm` settings an app needs to install the tarballs in `dir`: pnpm looks up the `@mailroom/*`
 * dependencies of a tarball in the registry unless overrides point them at the files, and it builds only
 * the packages `onlyBuiltDependencies` lists (better-sqlite3 builds its native module).
 */
function pnpmSettings(dir: string, files: readonly string[]): object {
  const overrides: Record<string, string> = {};
  for (const file of files) {
    const name = basename(file)
      .replace(/^mailroom-/, '@mailroom/')
      .replace(/\.tgz$/, '');
    overrides[name] = `file:${join(dir, basename(file))}`;
  }
  return { overrides: { ...overrides, ...NODE20_OVERRIDES }, onlyBuiltDependencies: ['better-sqlite3'] };
}

/** A path as one word of a shell line: as it is when plain, else in single quotes. */
const shellWord = (word: string): string =>
  /^[\w./:@%+=,-]+$/.test(word) ? word : `'${word.replaceAll("'", "'\\''")}'`;

const destination = resolve(process.argv[2] ?? join(ROOT, '.packs'));
const files = await packAll(destination);
writeFileSync(
  join(destination, 'pnpm.json'),
  `${JSON.stringify(pnpmSettings(destination, files), null, 2)}\n`,
);
writeFileSync(join(destination, 'overrides.json'), `${JSON.stringify(NODE20_OVERRIDES, null, 2)}\n`);
process.stdout.write(`${files.join('\n')}\n`);
// The README's app commands read the tarballs from "$MAILROOM/.packs": the folder that holds `.packs`.
if (basename(destination) === '.packs') {
  const clone = resolve(destination, '..');
  process.stdout.write(
    `\nIn your app (README, "Use it in your app"), start with this line:\n  MAILROOM=${shellWord(clone)}\n`,
  );
}
