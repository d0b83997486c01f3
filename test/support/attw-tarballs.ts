/**
 * arethetypeswrong on several tarballs in one process, for `package-publish.test.ts` (issue 37). Usage:
 * `node --import tsx test/support/attw-tarballs.ts <profile> <tarball>...`. Prints one JSON array on
 * stdout: per tarball, in order, `{ tarball, code, output }`, where `code` and `output` are what
 * `attw <tarball> --profile <profile> --format ascii` exits with and prints. The CLI checks one tarball
 * per process and loads TypeScript each time (1-2.5 CPU s each); this runs the CLI's own steps instead:
 * core's `createPackageFromTarballData` and `checkPackage` with no entrypoint options, then the CLI's
 * `render.typed` / `render.untyped` and `getExitCode` with the profile's options. No `.attw.json` is read:
 * the test runs the CLI in a temporary folder that has none.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { getExitCode as GetExitCode } from '@arethetypeswrong/cli/internal/getExitCode';
import type * as Render from '@arethetypeswrong/cli/internal/render';

type RenderOptions = Parameters<typeof Render.typed>[1];
type CheckResult = Parameters<typeof GetExitCode>[0];

/** The two calls of `@arethetypeswrong/core` the CLI makes for a local tarball. */
interface AttwCore {
  /** Reads a packed `.tgz`. */
  createPackageFromTarballData(tarball: Uint8Array): unknown;
  /** Resolves every entry point under every resolution mode. */
  checkPackage(pkg: unknown): Promise<CheckResult>;
}

/** The CLI's `--profile` presets (its `dist/profiles.js`, not exported). */
interface AttwProfiles {
  /** Each profile's resolutions to leave out. */
  profiles: Record<string, Required<Pick<RenderOptions, 'ignoreResolutions'>>>;
}

const [profileName, ...tarballs] = process.argv.slice(2);
if (!profileName || tarballs.length === 0) throw new Error('usage: attw-tarballs <profile> <tarball>...');

// core and the profiles are the CLI's own (its dependency, its file), so the versions cannot drift from
// the CLI the root package.json pins; core is not a root dependency, so it is resolved from the CLI.
const cliManifest = createRequire(import.meta.url).resolve('@arethetypeswrong/cli/package.json');
const fromCli = createRequire(cliManifest);
const core = (await import(pathToFileURL(fromCli.resolve('@arethetypeswrong/core')).href)) as AttwCore;
const { profiles } = (await import(
  pathToFileURL(join(dirname(cliManifest), 'dist/profiles.js')).href
)) as AttwProfiles;
const render = await import('@arethetypeswrong/cli/internal/render');
const { getExitCode } = await import('@arethetypeswrong/cli/internal/getExitCode');

const profile = profiles[profileName];
if (!profile) throw new Error(`attw has no profile ${profileName}`);
// The CLI's options for `--profile <profile> --format ascii` after its applyProfile().
const options: RenderOptions = {
  format: 'ascii',
  ignoreRules: [],
  ignoreResolutions: [...profile.ignoreResolutions],
  summary: true,
  emoji: true,
  color: true,
};

const results: { tarball: string; code: number; output: string }[] = [];
for (const tarball of tarballs) {
  const pkg = core.createPackageFromTarballData(new Uint8Array(readFileSync(tarball)));
  const analysis = await core.checkPackage(pkg);
  // The CLI writes an empty line, then the table; an untyped package exits 0 as in the CLI.
  const table = analysis.types ? await render.typed(analysis, options) : render.untyped(analysis);
  results.push({ tarball, code: getExitCode(analysis, options), output: `\n${table}\n` });
}
process.stdout.write(JSON.stringify(results));
