import { spawn } from 'node:child_process';
import {
  copyFileSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/**
 * The packages as an app gets them. The manifests in the repository first (no build). Then, once per
 * run, `pnpm pack:all` builds every package and writes its tarball (about 3 minutes); `publint` and
 * `@arethetypeswrong/cli` check each tarball, and two fresh apps outside the repository install them
 * with the README's "Use it in your app" commands as written, one with npm and one with pnpm, both at
 * once. Each app then sends through the embedded API, Express, Fastify and `@mailroom/client`, `require()`s every entry point
 * from CommonJS and runs `npx mailroom --help`. Network: the npm registry for the installs, loopback for
 * the servers.
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

  it("the README's pnpm overrides name every package's tarball", () => {
    expect(readmeInstall('pnpm').packageJson).toEqual({
      pnpm: {
        overrides: Object.fromEntries(
          PACKAGES.map((name) => [`@mailroom/${name}`, `file:../mailroom/.packs/${tarballOf(name)}`]),
        ),
        onlyBuiltDependencies: ['better-sqlite3'],
      },
    });
  });
});

describe('the packed packages', () => {
  let base = '';
  let packs = '';
  const packed: Manifest[] = [];
  const tarballFiles: Record<string, string[]> = {};
  const apps: Partial<Record<PackageManager, Promise<Installed>>> = {};

  beforeAll(async () => {
    base = mkdtempSync(join(tmpdir(), 'mailroom-install-'));
    // The README's layout: the clone's tarballs in ../mailroom/.packs, seen from the app.
    packs = join(base, 'mailroom', '.packs');
    mkdirSync(packs, { recursive: true });
    const result = await run('npx', ['--yes', 'pnpm@10', 'pack:all', packs], { cwd: ROOT, timeout: 540_000 });
    if (result.code !== 0) throw new Error(`pnpm pack:all failed:\n${result.output}`);
    // Both installs start now and run while the tarballs are checked.
    for (const manager of ['npm', 'pnpm'] as const) {
      const installing = installApp(manager, join(base, `app-${manager}`));
      installing.catch(() => {}); // awaited by the tests; an early failure is not unhandled meanwhile
      apps[manager] = installing;
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
    expect(readdirSync(packs).sort()).toEqual(PACKAGES.map(tarballOf).sort());
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
  // checked for real in the installed apps below.
  it('arethetypeswrong finds no problem in any tarball (profile esm-only)', async () => {
    const attw = join(ROOT, 'node_modules/.bin/attw');
    const results = await Promise.all(
      PACKAGES.map((name) =>
        run(attw, [join(packs, tarballOf(name)), '--profile', 'esm-only', '--format', 'ascii'], {
          cwd: base,
        }),
      ),
    );
    for (const [i, result] of results.entries()) {
      expect({ name: PACKAGES[i], code: result.code, output: result.output }).toEqual({
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
    }, 600_000);

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
});

type PackageManager = 'npm' | 'pnpm';

/** An app after the README's install commands: its folder, their output, and the one that failed. */
interface Installed {
  dir: string;
  output: string;
  failed?: string;
}

/** Creates the app (a package.json, plus the README's pnpm settings), copies the scripts, installs. */
async function installApp(manager: PackageManager, dir: string): Promise<Installed> {
  const { commands, packageJson } = readmeInstall(manager);
  mkdirSync(dir);
  const manifest = { name: `mailroom-install-${manager}`, private: true, type: 'module', ...packageJson };
  writeFileSync(join(dir, 'package.json'), `${JSON.stringify(manifest, null, 2)}\n`);
  for (const file of readdirSync(FIXTURES)) copyFileSync(join(FIXTURES, file), join(dir, file));
  let output = '';
  for (const command of commands) {
    const result = await run('sh', ['-c', command], { cwd: dir, env: appEnv(), timeout: 540_000 });
    output += `$ ${command}\n${result.output}\n`;
    if (result.code !== 0) return { dir, output, failed: command };
  }
  return { dir, output };
}

/**
 * The README's "Use it in your app" steps for one package manager: the commands of its `sh` blocks
 * (without their comments) and, for pnpm, the `package.json` fields of its `json` block.
 */
function readmeInstall(manager: PackageManager): { commands: string[]; packageJson: object } {
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
  const section = readme.split(/^## Use it in your app$/m)[1]?.split(/^## /m)[0] ?? '';
  const part = section
    .split(manager === 'npm' ? /^### With npm$/m : /^### With pnpm$/m)[1]
    ?.split(/^### /m)[0];
  if (!part) throw new Error(`README: no "### With ${manager}" in "## Use it in your app"`);
  const blocks = [...part.matchAll(/```(\w+)\n([\s\S]*?)```/g)];
  const commands = blocks
    .filter(([, lang]) => lang === 'sh')
    .flatMap(([, , code = '']) => code.split('\n'))
    .map((line) => line.replace(/\s+#\s.*$/, '').trim())
    .filter((line) => line !== '');
  const json = blocks.find(([, lang]) => lang === 'json')?.[2];
  return { commands, packageJson: json ? JSON.parse(json) : {} };
}

/**
 * A new user's shell: none of this run's package-manager, test or Mailroom settings. The package
 * managers prefer their caches (the registry is asked only for what is missing), and node-gyp builds
 * better-sqlite3 on every core.
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
