import { spawn } from 'node:child_process';
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { pgTestSchema } from './support/pg-admin.js';

/**
 * The packages as an app gets them. The manifests in the repository first (no build). Then, once per
 * run, `pnpm pack:all` builds every package and writes its tarball (about 3 minutes) into a clone folder
 * that is not called `mailroom` (issue 37); `publint` and arethetypeswrong (the steps of
 * `@arethetypeswrong/cli`, every tarball in one process) check each tarball, and three fresh apps
 * outside the repository install them with the README's "Use it in your app" commands as written (the
 * `MAILROOM=` line as pack:all printed it), all at once: all eight packages with npm and with pnpm, and
 * only what an app on PostgreSQL and Express needs, with npm. Each full app then sends through the
 * embedded API, Express, Fastify and `@mailroom/client`, `require()`s every entry point from CommonJS, runs
 * `npx mailroom --help`, the README's Fastify server file and the commands `npx mailroom serve` prints on
 * first start; the partial app runs the README's Express server file on PostgreSQL. Network: the npm
 * registry for the installs, loopback for the servers and PostgreSQL.
 */
const ROOT = fileURLToPath(new URL('..', import.meta.url));
const FIXTURES = join(ROOT, 'test/fixtures/install-app');
const PACKAGES = readdirSync(join(ROOT, 'packages')).sort();

type ExportMap = Record<string, Record<string, string>>;

interface Manifest {
  name: string;
  version: string;
  description?: string;
  license?: string;
  repository?: { type: string; url: string; directory?: string };
  type?: string;
  sideEffects?: boolean;
  engines?: { node?: string };
  types?: string;
  exports: ExportMap;
  publishConfig?: { exports?: ExportMap };
  files?: string[];
  bin?: Record<string, string>;
  dependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
  peerDependenciesMeta?: Record<string, { optional?: boolean }>;
  devDependencies?: Record<string, string>;
}

const manifestOf = (name: string): Manifest =>
  JSON.parse(readFileSync(join(ROOT, 'packages', name, 'package.json'), 'utf8'));

/** `@mailroom/core` is packed as `mailroom-core.tgz` (scripts/pack-all.ts). */
const tarballOf = (name: string): string => `mailroom-${name}.tgz`;

describe('the package manifests', () => {
  it.each(PACKAGES)('%s is ready to publish', (name) => {
    const manifest = manifestOf(name);
    expect(manifest).toMatchObject({
      name: `@mailroom/${name}`,
      description: expect.any(String),
      license: 'MIT',
      repository: { type: 'git', url: expect.stringMatching(/^git\+https:/), directory: `packages/${name}` },
      type: 'module',
      sideEffects: false,
      engines: { node: '>=20.19' },
      types: manifest.exports['.']?.types,
      files: ['dist'],
    });
    for (const [path, conditions] of Object.entries(manifest.exports)) {
      // types first (TypeScript takes the first match), default last; `import` and `default` the same
      // build, so that require() of it works on Node >= 20.19.
      const keys = Object.keys(conditions);
      expect(keys[0], path).toBe('types');
      expect(keys.at(-1), path).toBe('default');
      expect(conditions.default, path).toBe(conditions.import);
    }
    // The published manifest: the same exports without the workspace's source condition.
    const withoutSource = Object.fromEntries(
      Object.entries(manifest.exports).map(([path, { 'mailroom-source': _, ...rest }]) => [path, rest]),
    );
    expect(manifest.publishConfig?.exports).toEqual(withoutSource);
    const readme = readFileSync(join(ROOT, 'packages', name, 'README.md'), 'utf8');
    expect(readme).toMatch(/ES module/);
    expect(readme).toMatch(/require\(\)[^.]*Node >= 20\.19/);
  });

  it('express and fastify are optional peers of @mailroom/http', () => {
    const http = manifestOf('http');
    expect(Object.keys(http.peerDependencies ?? {})).toEqual(expect.arrayContaining(['express', 'fastify']));
    expect(http.peerDependenciesMeta).toMatchObject({
      express: { optional: true },
      fastify: { optional: true },
    });
  });

  it('the cli takes the AWS SDK and better-sqlite3 only as optional peers (an app installs them if it uses them)', () => {
    const cli = manifestOf('cli');
    expect(Object.keys(cli.dependencies ?? {})).not.toEqual(expect.arrayContaining(['@mailroom/ses']));
    expect(cli.dependencies).not.toHaveProperty('better-sqlite3');
    expect(cli.peerDependenciesMeta).toMatchObject({
      '@mailroom/ses': { optional: true },
      'better-sqlite3': { optional: true },
    });
  });

  it("the README's app commands name no clone folder: they start from the MAILROOM line pack:all prints", () => {
    for (const part of ['npm', 'pnpm', 'partial'] as const) {
      const script = readmeInstall(part, 'MAILROOM=/clone');
      expect(script.split('\n')[0], part).toBe('MAILROOM=/clone');
      expect(script, part).not.toContain('../mailroom');
      expect(script, part).toContain('npm init -y');
    }
  });
});

describe('the packed packages', () => {
  let base = '';
  let packs = '';
  const packed: Manifest[] = [];
  const tarballFiles: Record<string, string[]> = {};
  const apps: Partial<Record<AppKind, Promise<Installed>>> = {};

  beforeAll(async () => {
    base = mkdtempSync(join(tmpdir(), 'mailroom-install-'));
    // A clone under another name than `mailroom`, its tarballs in .packs; the apps sit elsewhere.
    packs = join(base, 'src', 'my-mailroom-clone', '.packs');
    mkdirSync(packs, { recursive: true });
    const result = await run('npx', ['--yes', 'pnpm@10', 'pack:all', packs], { cwd: ROOT, timeout: 540_000 });
    if (result.code !== 0) throw new Error(`pnpm pack:all failed:\n${result.output}`);
    // The line the README's app commands start with, as pack:all printed it last.
    const mailroomLine = /^\s*(MAILROOM=.+)$/m.exec(result.stdout)?.[1];
    if (!mailroomLine) throw new Error(`pack:all printed no MAILROOM= line:\n${result.output}`);
    localPrebuilds = await standInPrebuild(join(base, 'prebuilds'));
    // The installs start now and run while the tarballs are checked.
    for (const kind of APPS) {
      const installing = installApp(kind, join(base, 'apps', `app-${kind}`), mailroomLine);
      installing.catch(() => {}); // awaited by the tests; an early failure is not unhandled meanwhile
      apps[kind] = installing;
    }
    for (const name of PACKAGES) {
      const tarball = join(packs, tarballOf(name));
      const list = await run('tar', ['-tzf', tarball], { cwd: base });
      tarballFiles[name] = list.stdout.split('\n').filter(Boolean).sort();
      const json = await run('tar', ['-xzOf', tarball, 'package/package.json'], { cwd: base });
      packed.push(JSON.parse(json.stdout));
    }
  }, 600_000);

  afterAll(async () => {
    await Promise.allSettled(Object.values(apps));
    if (base) rmSync(base, { recursive: true, force: true });
  }, 600_000);

  it('pack:all writes one tarball per package, as a publish would: no workspace range, no source', () => {
    expect(readdirSync(packs).sort()).toEqual(
      [...PACKAGES.map(tarballOf), 'overrides.json', 'pnpm.json'].sort(),
    );
    expect(packed.map((m) => m.name).sort()).toEqual(PACKAGES.map((name) => `@mailroom/${name}`).sort());
    for (const manifest of packed) {
      const text = JSON.stringify(manifest);
      expect(text, manifest.name).not.toContain('workspace:');
      expect(text, manifest.name).not.toContain('mailroom-source');
      expect(text, manifest.name).not.toContain('./src/');
      for (const [dep, range] of Object.entries({ ...manifest.dependencies, ...manifest.peerDependencies })) {
        if (dep.startsWith('@mailroom/'))
          expect(range, `${manifest.name} -> ${dep}`).toBe(`^${manifest.version}`);
      }
    }
    for (const [name, files] of Object.entries(tarballFiles)) {
      const outside = files.filter((f) => !/^package\/(dist\/.+|package\.json|README\.md|LICENSE)$/.test(f));
      expect(outside, name).toEqual([]);
      expect(files, name).toContain('package/dist/index.js');
      // The MIT licence travels with every package (npm takes LICENSE from the package's own folder).
      expect(files, name).toContain('package/LICENSE');
    }
  });

  it("pack:all's pnpm.json points every package's name at its tarball and lets better-sqlite3 build", () => {
    expect(JSON.parse(readFileSync(join(packs, 'pnpm.json'), 'utf8'))).toEqual({
      overrides: {
        ...Object.fromEntries(
          PACKAGES.map((name) => [`@mailroom/${name}`, `file:${join(packs, tarballOf(name))}`]),
        ),
        ...NODE20_OVERRIDES,
      },
      onlyBuiltDependencies: ['better-sqlite3'],
    });
    expect(JSON.parse(readFileSync(join(packs, 'overrides.json'), 'utf8'))).toEqual(NODE20_OVERRIDES);
  });

  it('publint finds nothing to report in any tarball (strict)', async () => {
    const publint = join(ROOT, 'node_modules/.bin/publint');
    const results = await Promise.all(
      PACKAGES.map((name) =>
        run(publint, ['run', join(packs, tarballOf(name)), '--strict', '--level', 'suggestion'], {
          cwd: base,
        }),
      ),
    );
    for (const [i, result] of results.entries()) {
      expect({ name: PACKAGES[i], code: result.code, output: result.output }).toEqual({
        name: PACKAGES[i],
        code: 0,
        output: expect.stringContaining('All good!'),
      });
    }
  }, 120_000);

  // esm-only: ES modules for `import` and bundlers. attw models TypeScript's node16 `require`, which
  // refuses an ES module; the profile leaves that out, and Node >= 20.19's require() of these builds is
  // checked for real in the installed apps below. One process checks all the tarballs with the CLI's own
  // steps and prints, per tarball, what `attw TARBALL --profile esm-only --format ascii` would: its CLI
  // takes one tarball per process and loads TypeScript each time (issue 37, about 15 CPU s).
  it('arethetypeswrong finds no problem in any tarball (profile esm-only)', async () => {
    const tarballs = PACKAGES.map((name) => join(packs, tarballOf(name)));
    const result = await run(
      process.execPath,
      ['--import', 'tsx', join(ROOT, 'test/support/attw-tarballs.ts'), 'esm-only', ...tarballs],
      { cwd: ROOT }, // where `--import tsx` resolves; the script reads no .attw.json
    );
    expect({ code: result.code, output: result.output }).toEqual({ code: 0, output: expect.any(String) });
    const checked: { tarball: string; code: number; output: string }[] = JSON.parse(result.stdout);
    expect(checked.map((c) => c.tarball)).toEqual(tarballs);
    for (const [i, { code, output }] of checked.entries()) {
      expect({ name: PACKAGES[i], code, output }).toEqual({
        name: PACKAGES[i],
        code: 0,
        output: expect.stringContaining('node16 (from ESM): 🟢 (ESM)'),
      });
    }
  }, 120_000);

  describe.each(['npm', 'pnpm'] as const)('installed with %s into a fresh app', (manager) => {
    const installed = async (): Promise<Installed> => {
      const app = await apps[manager];
      if (!app) throw new Error('the packing step failed');
      return app;
    };

    it("installs with the README's commands", async () => {
      const app = await installed();
      expect(app.failed, app.output).toBeUndefined();
      // pnpm lists every dependency whose install script it skipped; better-sqlite3 must not be one.
      expect(app.output).not.toMatch(/Ignored build scripts/);
      // npm 11.19 warns about install scripts allowScripts does not list: the README's line lists it.
      expect(app.output).not.toMatch(/not yet covered by allowScripts/);
      // On Node 20 (the oldest supported), no dependency declares a newer Node (issue 37).
      expect(app.output).not.toMatch(/EBADENGINE|Unsupported engine/);
    }, 600_000);

    it('runs the first-start commands npx mailroom serve prints, as printed', async () => {
      const app = await installed();
      const server = startServer('npx', ['mailroom', 'serve', '--port', '0', '--outbox', 'outbox'], app.dir);
      try {
        const line = await server.waitFor(/^\s+(npx mailroom template add --project prj_\w+ .+)$/m);
        expect(readFileSync(join(app.dir, 'welcome.mjml'), 'utf8')).toContain('<mjml>');
        const result = await run('sh', ['-c', line], { cwd: app.dir, env: appEnv() });
        expect(result.code, result.output).toBe(0);
        expect(result.stdout).toMatch(/Stored template welcome version 2/);
      } finally {
        await server.stop();
      }
    }, 120_000);

    it("runs the README's Fastify server file", async () => {
      const app = await installed();
      const result = await runReadmeServer(app.dir, 'server-fastify.mjs', {});
      expect(result).toEqual({ openapi: 200, keysWithoutKey: 401 });
    }, 120_000);

    it('sends through the embedded API, Express, Fastify and the typed client, on SQLite', async () => {
      const app = await installed();
      const result = await run(process.execPath, ['send-all.mjs'], { cwd: app.dir, env: appEnv() });
      expect(result.code, result.output).toBe(0);
      expect(JSON.parse(result.stdout)).toEqual({
        statuses: { embedded: 'queued', express: 200, client: 'queued', fastify: 200 },
        clientError: 'SENDER_NOT_ALLOWED',
        subjects: [
          'Hello through client',
          'Hello through embedded',
          'Hello through express',
          'Hello through fastify',
        ],
      });
    }, 120_000);

    it('require() loads every entry point from a .cjs file', async () => {
      const app = await installed();
      // @mailroom/core/testing imports vitest and fast-check, optional peers this app does not install.
      const ids = packed.flatMap((manifest) =>
        Object.keys(manifest.exports)
          .map((path) => (path === '.' ? manifest.name : `${manifest.name}/${path.slice(2)}`))
          .filter((id) => id !== '@mailroom/core/testing'),
      );
      expect(ids).toHaveLength(10);
      const result = await run(process.execPath, ['require-all.cjs', ...ids], {
        cwd: app.dir,
        env: appEnv(),
      });
      expect(result.code, result.output).toBe(0);
      const loaded: Record<string, string[]> = JSON.parse(result.stdout);
      expect(Object.keys(loaded).sort()).toEqual([...ids].sort());
      for (const id of ids) expect(loaded[id]?.length, id).toBeGreaterThan(0);
      expect(loaded['@mailroom/core']).toContain('createMailroom');
      expect(loaded['@mailroom/http/express']).toContain('mailroomRouter');
    }, 120_000);

    it('runs npx mailroom --help', async () => {
      const app = await installed();
      const result = await run('npx', ['mailroom', '--help'], { cwd: app.dir, env: appEnv() });
      expect(result.code, result.output).toBe(0);
      expect(result.stdout).toMatch(/^Usage: mailroom <command>/);
      expect(result.stdout).toContain('serve');
    }, 120_000);
  });

  describe('only what an app on PostgreSQL and Express needs, installed with npm', () => {
    const installed = async (): Promise<Installed> => {
      const app = await apps.partial;
      if (!app) throw new Error('the packing step failed');
      return app;
    };

    it("installs with the README's commands: every @mailroom package from its tarball, no AWS SDK, no better-sqlite3", async () => {
      const app = await installed();
      expect(app.failed, app.output).toBeUndefined();
      const lock = JSON.parse(readFileSync(join(app.dir, 'package-lock.json'), 'utf8')) as {
        packages: Record<string, { resolved?: string }>;
      };
      const installedNames = Object.keys(lock.packages).map((path) => path.replace(/^.*node_modules\//, ''));
      const ours = Object.entries(lock.packages).filter(([path]) => /node_modules\/@mailroom\//.test(path));
      expect(ours.map(([path]) => path.replace(/^.*node_modules\//, '')).sort()).toEqual(
        ['cli', 'client', 'core', 'http', 'memory', 'smtp', 'sql'].map((name) => `@mailroom/${name}`),
      );
      // Each from the clone's tarball: no @mailroom/* name was resolved through the registry.
      for (const [path, entry] of ours) expect(entry.resolved, path).toMatch(/^file:/);
      expect(app.output).not.toMatch(/EBADENGINE|Unsupported engine/);
      expect(installedNames).not.toContain('@mailroom/ses');
      expect(installedNames).not.toContain('better-sqlite3');
      expect(installedNames.filter((name) => name.startsWith('@aws-sdk/'))).toEqual([]);
    }, 600_000);

    it('npx mailroom names the missing package for SES and for a SQLite database', async () => {
      const app = await installed();
      const ses = await run('npx', ['mailroom', 'serve', '--port', '0', '--ses-region', 'eu-west-1'], {
        cwd: app.dir,
        env: appEnv(),
      });
      expect(ses.code, ses.output).toBe(1);
      expect(ses.output).toContain('needs the `@mailroom/ses` package');
      const sqlite = await run('npx', ['mailroom', 'project', 'list'], { cwd: app.dir, env: appEnv() });
      expect(sqlite.code, sqlite.output).toBe(1);
      expect(sqlite.output).toContain('`better-sqlite3` package');
    }, 120_000);

    it("runs the README's Express server file on PostgreSQL, and the cli's admin commands on the same database", async (context) => {
      const app = await installed();
      const server = process.env.MAILROOM_TEST_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
      const schema = await pgTestSchema(server, 'mr_app').catch((error: unknown) => {
        if (process.env.CI) throw error;
        return undefined;
      });
      if (!schema) return context.skip('PostgreSQL does not answer');
      try {
        const env = { DATABASE_URL: schema.url };
        expect(await runReadmeServer(app.dir, 'server.mjs', env)).toEqual({
          openapi: 200,
          keysWithoutKey: 401,
        });
        const created = await run(
          'npx',
          ['mailroom', 'project', 'create', 'Acme', '--database', schema.url, '--json'],
          {
            cwd: app.dir,
            env: appEnv(),
          },
        );
        expect(created.code, created.output).toBe(0);
        expect(JSON.parse(created.stdout)).toMatchObject({ secret: expect.stringMatching(/^sk_live_/) });
      } finally {
        await schema.drop();
      }
    }, 120_000);
  });
});

/** What pack:all holds back for Node 20 (scripts/pack-all.ts), in overrides.json and pnpm.json. */
const NODE20_OVERRIDES = { nopt: '^7.2.1', 'light-my-request': '6.6.0' };

/** The apps installed: all eight packages with npm and with pnpm, and a PostgreSQL and Express app. */
type AppKind = 'npm' | 'pnpm' | 'partial';
const APPS: readonly AppKind[] = ['npm', 'pnpm', 'partial'];

/** An app after the README's install commands: its folder, their output, and the one that failed. */
interface Installed {
  dir: string;
  output: string;
  failed?: string;
}

/**
 * Creates the app folder, copies the scripts and runs the README's commands for `kind` as one shell script
 * (its `MAILROOM=` line replaced by the one pack:all printed), stopping at the first failure.
 */
async function installApp(kind: AppKind, dir: string, mailroomLine: string): Promise<Installed> {
  const script = readmeInstall(kind, mailroomLine);
  mkdirSync(dir, { recursive: true });
  for (const file of readdirSync(FIXTURES)) copyFileSync(join(FIXTURES, file), join(dir, file));
  for (const [file, code] of Object.entries(readmeServerFiles())) writeFileSync(join(dir, file), code);
  const result = await run('sh', ['-ec', script], { cwd: dir, env: appEnv(), timeout: 540_000 });
  const output = `$ ${script}\n${result.output}\n`;
  return result.code === 0 ? { dir, output } : { dir, output, failed: script };
}

/** The README's "Use it in your app" section. */
function appSection(): string {
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
  return readme.split(/^## Use it in your app$/m)[1]?.split(/^## /m)[0] ?? '';
}

/**
 * The README's commands for one kind of app: the `sh` block of its part (`### With npm`, `### With
 * pnpm`, `### Only what you use`) as one script, its first line, `MAILROOM=...`, replaced by
 * `mailroomLine` (the README tells the reader to paste the line pack:all printed), comments dropped.
 */
function readmeInstall(kind: AppKind, mailroomLine: string): string {
  const heading = { npm: 'With npm', pnpm: 'With pnpm', partial: 'Only what you use' }[kind];
  const part = appSection()
    .split(new RegExp(`^### ${heading}$`, 'm'))[1]
    ?.split(/^### /m)[0];
  if (!part) throw new Error(`README: no "### ${heading}" in "## Use it in your app"`);
  const block = /```sh\n([\s\S]*?)```/.exec(part)?.[1] ?? '';
  const lines = block
    .split('\n')
    .map((line) => line.replace(/\s+#\s.*$/, '').trimEnd())
    .filter((line) => line.trim() !== '');
  if (!lines[0]?.startsWith('MAILROOM='))
    throw new Error(`README: "### ${heading}" must start with MAILROOM=`);
  return [mailroomLine, ...lines.slice(1)].join('\n');
}

/** The README's server files (`js` blocks of the section whose first line is `// NAME.mjs`), by name. */
function readmeServerFiles(): Record<string, string> {
  const files: Record<string, string> = {};
  for (const [, code = ''] of appSection().matchAll(/```js\n([\s\S]*?)```/g)) {
    const name = /^\/\/ ([\w-]+\.mjs)\n/.exec(code)?.[1];
    if (name) files[name] = code;
  }
  return files;
}

/**
 * Runs one of the README's server files in `dir` on a free port, as `node FILE` (with `env`), and asks
 * it for the OpenAPI document (public) and the keys (401 without a key); stops it.
 */
async function runReadmeServer(
  dir: string,
  file: string,
  env: NodeJS.ProcessEnv,
): Promise<{ openapi: number; keysWithoutKey: number }> {
  const server = startServer(process.execPath, [file], dir, { PORT: '0', ...env });
  try {
    const base = await server.waitFor(/listening on (http:\/\/127\.0\.0\.1:\d+\/api)/);
    const openapi = (await fetch(`${base}/openapi.json`)).status;
    const keysWithoutKey = (await fetch(`${base}/keys`)).status;
    return { openapi, keysWithoutKey };
  } finally {
    await server.stop();
  }
}

/** A server process in its own group: wait for a line of its output, stop it and all it started. */
function startServer(
  command: string,
  args: string[],
  cwd: string,
  env: NodeJS.ProcessEnv = {},
): { waitFor(pattern: RegExp): Promise<string>; stop(): Promise<void> } {
  const child = spawn(command, args, { cwd, env: { ...appEnv(), ...env }, detached: true });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const closed = new Promise((resolve) => child.once('close', resolve));
  return {
    waitFor: (pattern) =>
      vi.waitFor(
        () => {
          const match = pattern.exec(output);
          if (!match) {
            if (child.exitCode !== null) throw new Error(`exited (${child.exitCode}):\n${output}`);
            throw new Error(`no ${pattern} yet:\n${output}`);
          }
          return match[1] ?? match[0];
        },
        { timeout: 60_000, interval: 100 },
      ),
    async stop() {
      try {
        if (child.pid && child.exitCode === null) process.kill(-child.pid, 'SIGTERM');
      } catch {
        // already gone
      }
      await closed;
    },
  };
}

/** The folder of {@link standInPrebuild}'s binary, once made. */
let localPrebuilds: string | undefined;

/**
 * better-sqlite3's install script first fetches a prebuilt binary (prebuild-install, from GitHub's
 * releases, which this machine cannot reach) and else compiles its C sources: minutes of both cores for
 * each app, with the rest of the suite beside it. A user's install downloads that binary; here the
 * workspace's own build of the same version stands in for it, as a local prebuild
 * (`npm_config_better_sqlite3_local_prebuilds`, which prebuild-install reads before it downloads). The
 * install script still runs, so pnpm's "Ignored build scripts" check keeps its meaning; an app that
 * resolves another version than the workspace's compiles as before. Answers the folder, or undefined.
 */
async function standInPrebuild(dir: string): Promise<string | undefined> {
  const require = createRequire(join(ROOT, 'packages/sql/package.json'));
  let pkgDir: string;
  try {
    pkgDir = dirname(require.resolve('better-sqlite3/package.json'));
  } catch {
    return undefined;
  }
  const { version } = JSON.parse(readFileSync(join(pkgDir, 'package.json'), 'utf8')) as { version: string };
  if (!existsSync(join(pkgDir, 'build/Release/better_sqlite3.node'))) return undefined;
  mkdirSync(dir, { recursive: true });
  // prebuild-install's name: {name}-v{version}-{runtime}-v{abi}-{platform}{libc}-{arch}.tar.gz (glibc: no libc).
  const file = `better-sqlite3-v${version}-node-v${process.versions.modules}-${process.platform}-${process.arch}.tar.gz`;
  const packed = await run(
    'tar',
    ['-czf', join(dir, file), '-C', pkgDir, 'build/Release/better_sqlite3.node'],
    {
      cwd: dir,
    },
  );
  return packed.code === 0 ? dir : undefined;
}

/**
 * A new user's shell: none of this run's package-manager, test or Mailroom settings. The package
 * managers prefer their caches (the registry is asked only for what is missing), better-sqlite3 finds the
 * binary of {@link standInPrebuild}, and node-gyp, where it still builds, uses every core.
 */
function appEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (/^(npm_|pnpm_|MAILROOM_|VITEST|NODE_)/i.test(key) || key === 'INIT_CWD') continue;
    env[key] = value;
  }
  return {
    ...env,
    npm_config_prefer_offline: 'true',
    npm_config_audit: 'false',
    npm_config_fund: 'false',
    npm_config_update_notifier: 'false',
    JOBS: 'max',
    ...(localPrebuilds ? { npm_config_better_sqlite3_local_prebuilds: localPrebuilds } : {}),
  };
}

interface RunResult {
  code: number | null;
  stdout: string;
  /** stdout and stderr together, for failure messages. */
  output: string;
}

/** Runs a command to its end (its process group is killed after `timeout`); never rejects. */
function run(
  command: string,
  args: string[],
  options: { cwd: string; env?: NodeJS.ProcessEnv; timeout?: number },
): Promise<RunResult> {
  return new Promise((resolve) => {
    const child = spawn(command, args, { cwd: options.cwd, env: options.env ?? process.env, detached: true });
    let stdout = '';
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
      output += chunk.toString();
    });
    child.stderr.on('data', (chunk: Buffer) => {
      output += chunk.toString();
    });
    const timer = setTimeout(() => {
      output += `\n[killed after ${options.timeout} ms]`;
      try {
        if (child.pid) process.kill(-child.pid, 'SIGKILL');
      } catch {
        // already gone
      }
    }, options.timeout ?? 110_000);
    child.on('error', (error) => {
      clearTimeout(timer);
      resolve({ code: null, stdout, output: `${output}\n${error.message}` });
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, stdout, output: signal ? `${output}\n[ended by ${signal}]` : output });
    });
  });
}
