/**
 * From the sources only (this repository's development and tests; never in the build): a thread's entry
 * bundled once per process with esbuild into one plain ES module, so that each new thread loads one file
 * instead of registering tsx and resolving a hundred source files through its hooks. Measured: 1.4 s of
 * CPU per render thread from the sources through tsx, against about 0.3 s for the build's; a test suite
 * that starts an engine per test started hundreds of them (BENCHMARKS.md, "Test suite", session 16).
 * esbuild is tsx's own transpiler, so the code is the same. Packages are copied in too (not in the build,
 * where they stay imports): resolving and linking a thread's dozen packages, and the CommonJS ones' export
 * scan, were half of its start (render thread: 160 ms of CPU with packages as imports, 75 ms copied in).
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

/** The part of esbuild's API used here (esbuild comes with tsx, a development dependency). */
interface Esbuild {
  buildSync(options: Record<string, unknown>): { outputFiles?: Array<{ contents: Uint8Array }> };
}

/** Each entry's bundle in this process: its URL, or null when it could not be made (tsx then runs it). */
const bundles = new Map<string, string | null>();

/**
 * The URL of a bundle of the `.ts` module at `href`, made on first use in this process; `href` itself when
 * it is not a `.ts` file or no bundle can be made (no esbuild, a build error): the caller then loads it
 * through tsx as before.
 */
export function sourceModule(href: string): string {
  if (!href.endsWith('.ts')) return href;
  let bundled = bundles.get(href);
  if (bundled === undefined) {
    try {
      bundled = bundle(href);
    } catch {
      bundled = null;
    }
    bundles.set(href, bundled);
  }
  return bundled ?? href;
}

function bundle(href: string): string {
  const entry = fileURLToPath(href);
  // The source layout: this file is packages/core/src/render/, the repository's root four folders up.
  const root = fileURLToPath(new URL('../../../../', import.meta.url));
  const fromRoot = createRequire(join(root, 'package.json'));
  const esbuild = createRequire(fromRoot.resolve('tsx'))('esbuild') as Esbuild;
  const result = esbuild.buildSync({
    entryPoints: [entry],
    bundle: true,
    write: false,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    conditions: ['mailroom-source'],
    // Packages are copied in, but addons and what is loaded by name at run time (`createRequire`: MJML,
    // the SQLite driver) resolve from the bundle's folder inside the entry's package, as imports would.
    external: ['*.node'],
    // The CommonJS packages copied in call `require` (Node's modules, their own JSON): an ES module has none.
    // `import.meta.filename` (Node >= 20.11), not `.url`: the tests' child bundles rewrite every `.url` text
    // in a source file to that file's URL, strings included (test/support/child-bundle.ts).
    banner: {
      js: "import { createRequire as __mailroomRequire } from 'node:module'; const require = __mailroomRequire(import.meta.filename);",
    },
    sourcemap: 'inline',
    // The map names the files; their text would double the bundle that each thread reads.
    sourcesContent: false,
    logLevel: 'silent',
  });
  const contents = result.outputFiles?.[0]?.contents;
  if (!contents) throw new Error('esbuild wrote nothing');
  const folder = join(packageRoot(entry), 'node_modules', '.cache', 'mailroom-threads');
  const name = entry.split(/[\\/]/).at(-1)?.replace(/\.ts$/, '') ?? 'entry';
  const file = join(folder, `${name}-${createHash('sha1').update(contents).digest('hex').slice(0, 12)}.mjs`);
  if (!existsSync(file)) {
    mkdirSync(folder, { recursive: true });
    // Another process may write the same bundle at the same time: each renames a whole file into place.
    const partial = `${file}.${process.pid}.${Math.random().toString(36).slice(2)}`;
    writeFileSync(partial, contents);
    renameSync(partial, file);
    prune(folder, name, file);
  }
  return pathToFileURL(file).href;
}

/** Bundles of the entry `name` made from older sources: removed after a day, unused by then. */
function prune(folder: string, name: string, keep: string): void {
  const before = Date.now() - 24 * 60 * 60 * 1000;
  for (const other of readdirSync(folder)) {
    const path = join(folder, other);
    if (path === keep || !other.startsWith(`${name}-`)) continue;
    try {
      if (statSync(path).mtimeMs < before) rmSync(path, { force: true });
    } catch {}
  }
}

/** The folder of the nearest package.json above `file`. */
function packageRoot(file: string): string {
  let dir = dirname(file);
  while (!existsSync(join(dir, 'package.json'))) {
    const up = dirname(dir);
    if (up === dir) throw new Error(`no package.json above ${file}`);
    dir = up;
  }
  return dir;
}
