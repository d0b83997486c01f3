/**
 * One package's build with its own tsup config (`packages/<name>/tsup.config.ts`), in two steps that
 * `build-packages.ts` runs for all packages: the ES modules, then the declarations bundled from the
 * tree `declarations.ts` wrote. tsup reads the package's `package.json` (what stays external) and
 * resolves the entries from the working directory, so each step runs in the package's folder, one at a
 * time (the process has one working directory).
 */
import { basename, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { build, type Options } from 'tsup';

/** A package's build config: the default export of its `tsup.config.ts` (an object, as all of ours are). */
export async function packageOptions(dir: string): Promise<Options> {
  const config = (await import(pathToFileURL(join(dir, 'tsup.config.ts')).href)) as { default: unknown };
  if (typeof config.default !== 'object' || config.default === null || Array.isArray(config.default))
    throw new Error(`${dir}/tsup.config.ts: the default export is not one config object`);
  return config.default as Options;
}

/** The entry files of a config, relative to its package. */
export function entryFiles(options: Options): string[] {
  const { entry } = options;
  if (!entry) throw new Error('a package config without entry');
  return Array.isArray(entry) ? entry : Object.values(entry);
}

/**
 * The ES modules (and their source maps) as the package's own `tsup` writes them, without `.d.ts`.
 * esbuild takes its working directory once, when it starts: each build names the package's folder.
 */
export function buildModules(dir: string, options: Options): Promise<void> {
  return inPackage(dir, () =>
    build({
      ...options,
      config: false,
      dts: false,
      esbuildOptions(esbuild, context) {
        options.esbuildOptions?.(esbuild, context);
        esbuild.absWorkingDir = dir;
      },
    }),
  );
}

/**
 * The package's `dist/*.d.ts`: tsup's declaration bundling (rollup-plugin-dts) of the entries' `.d.ts`
 * under `declarationsDir/<folder>` (the tree `declarations.ts` wrote, already checked). The entries keep
 * their shape, so the output names are those of the package's own build. The plugin's programs only
 * read those files: without resolving imports, the default library or `@types` they load nothing else.
 */
export function bundleDeclarations(dir: string, options: Options, declarationsDir: string): Promise<void> {
  const folder = join(declarationsDir, basename(dir));
  const { entry } = options;
  const moved = (file: string): string => join(folder, file);
  const dtsEntry = Array.isArray(entry)
    ? entry.map(moved)
    : Object.fromEntries(Object.entries(entry ?? {}).map(([name, file]) => [name, moved(file)]));
  return inPackage(dir, () =>
    build({
      ...options,
      config: false,
      dts: { only: true, entry: dtsEntry, compilerOptions: { noResolve: true, noLib: true, types: [] } },
    }),
  );
}

let queue: Promise<unknown> = Promise.resolve();

/** Runs `step` with the package's folder as the working directory, after the steps queued before it. */
function inPackage(dir: string, step: () => Promise<void>): Promise<void> {
  const run = async (): Promise<void> => {
    const before = process.cwd();
    process.chdir(dir);
    try {
      await step();
    } finally {
      process.chdir(before);
    }
  };
  const done = queue.then(run, run);
  queue = done.catch(() => {});
  return done;
}
