/**
 * Child processes of the tests (a delivery worker, `mailroom serve`, an app) started from one bundle of
 * the sources instead of `node --import tsx`: tsx's loader runs every module a child imports, the
 * dependencies' too, through hooks on a thread of their own, which cost a crash worker about 4 CPU seconds
 * before it sent anything (and its render thread registered tsx again); the same worker from a bundle
 * starts in about 1.2 (BENCHMARKS.md, "Sixteenth session (`suite37c`)"). The bundle is built
 * from the current sources (esbuild, as tsx itself transpiles) at the first start in a test process, so
 * what runs is what the test file would have run through tsx, with no `pnpm build` needed.
 *
 * As in the build (`dist/`), the thread entries the engine starts (`render-thread.js`, `parse-thread.js`,
 * `preview-thread.js`) and the composer module a render thread imports (`raw-composer.js`) are files next
 * to the child's bundle. The dependencies stay outside it, imported by the absolute path Node would have
 * resolved from the importing source file (pnpm gives each package its own), and `import.meta.url` is
 * the source file's own URL wherever a module finds something relative to itself (its package.json, a
 * driver through `createRequire`), except where it finds those sibling entries.
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { build, type Plugin } from 'esbuild';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const CORE = join(ROOT, 'packages/core/src');
/** Content-addressed: a bundle is written once per version of the sources, and never changes after. */
const CACHE = join(ROOT, 'node_modules/.cache/mailroom-test-children');

/** The entries every bundle carries beside the child's own: what the engine loads by URL at run time. */
const SIBLINGS: Record<string, string> = {
  'render-thread': join(CORE, 'delivery/render-thread.ts'),
  'parse-thread': join(CORE, 'receiving/parse-thread.ts'),
  'preview-thread': join(CORE, 'render/preview-thread.ts'),
  'raw-composer': join(CORE, 'mime/raw-composer.ts'),
};

/**
 * What `import.meta.url` becomes in a source file of the bundle: the bundle's own URL where the module
 * starts a sibling thread entry (`threadEntry(name, import.meta.url)`: `render-thread.js` next to it), the
 * bundled composer for the module a render thread imports, and the source file's URL everywhere else
 * (as under tsx).
 */
function metaUrl(file: string, source: string): string | undefined {
  if (file === SIBLINGS['raw-composer']) return 'new URL("./raw-composer.js", import.meta.url).href';
  if (/\bthreadEntry\(\s*'[\w-]+',\s*import\.meta\.url\s*\)/.test(source)) return undefined;
  return JSON.stringify(pathToFileURL(file).href);
}

const sourceUrls: Plugin = {
  name: 'source-import-meta-url',
  setup(b) {
    b.onLoad({ filter: /\.ts$/ }, (args) => {
      if (args.path.includes('/node_modules/')) return undefined;
      const source = readFileSync(args.path, 'utf8');
      if (!source.includes('import.meta.url')) return undefined;
      const url = metaUrl(args.path, source);
      return {
        contents: url === undefined ? source : source.replaceAll('import.meta.url', url),
        loader: 'ts',
      };
    });
  },
};

/** Dependencies stay outside the bundle, at the path the importing source file resolves them to. */
const externalDependencies: Plugin = {
  name: 'external-dependencies',
  setup(b) {
    b.onResolve({ filter: /^[^./]/ }, async (args) => {
      if (args.path.startsWith('@mailroom/') || args.pluginData === 'inner') return undefined;
      if (args.path.startsWith('node:')) return { path: args.path, external: true };
      const found = await b.resolve(args.path, {
        kind: args.kind,
        resolveDir: args.resolveDir,
        importer: args.importer,
        pluginData: 'inner',
      });
      if (found.errors.length > 0) return { errors: found.errors };
      return { path: found.path, external: true };
    });
  },
};

async function bundle(entry: string): Promise<string> {
  const name = relative(ROOT, entry)
    .replace(/\.ts$/, '')
    .replace(/[^\w-]+/g, '-');
  const { outputFiles } = await build({
    entryPoints: { [name]: entry, ...SIBLINGS },
    absWorkingDir: ROOT,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    // Workspace packages from their sources, as `--conditions=mailroom-source` does under tsx.
    conditions: ['mailroom-source'],
    // Error and class names as in the sources (a bundle would rename clashing ones).
    keepNames: true,
    outdir: CACHE,
    write: false,
    logLevel: 'error',
    plugins: [sourceUrls, externalDependencies],
  });
  const hash = createHash('sha256');
  for (const file of outputFiles) hash.update(file.path).update(file.contents);
  const dir = join(CACHE, hash.digest('hex').slice(0, 16));
  if (!existsSync(dir)) {
    // Written aside, then renamed into place: test files in other processes may build the same bundle.
    const partial = `${dir}.${process.pid}.partial`;
    mkdirSync(partial, { recursive: true });
    writeFileSync(join(partial, 'package.json'), '{ "type": "module" }\n');
    for (const file of outputFiles) writeFileSync(join(partial, relative(CACHE, file.path)), file.contents);
    try {
      renameSync(partial, dir);
    } catch (error) {
      rmSync(partial, { recursive: true, force: true });
      if (!existsSync(dir)) throw error;
    }
  }
  return join(dir, `${name}.js`);
}

/**
 * Bundles kept on `globalThis`: built once per test process (test files may share one) and entry.
 */
const BUNDLES_KEY = Symbol.for('mailroom.test.childBundles');
const shared = globalThis as { [BUNDLES_KEY]?: Map<string, Promise<string>> };
shared[BUNDLES_KEY] ??= new Map();
const bundles = shared[BUNDLES_KEY];

/**
 * The bundled form of the TypeScript entry `entry` (an absolute path, e.g. `test/support/crash-worker.ts`
 * or `packages/cli/src/bin.ts`): start it with `spawn(process.execPath, [await childEntry(entry), ...args])`.
 */
export function childEntry(entry: string): Promise<string> {
  let built = bundles.get(entry);
  if (!built) {
    built = bundle(entry);
    bundles.set(entry, built);
    built.catch(() => bundles.delete(entry));
  }
  return built;
}
