import { Worker, type WorkerOptions } from 'node:worker_threads';
import { sourceModule } from './source-bundle.js';

/**
 * Starts the worker thread whose entry is `url`: `.js` from the build; `.ts` when the engine runs from its
 * sources (development, tests). A worker thread does not inherit the TypeScript loader, whatever the
 * parent was started with, so from source the thread runs a bundle of its entry made once per process
 * (`sourceModule`); should that fail, it registers tsx, then imports the entry, resolving workspace
 * packages to their sources like the parent (`mailroom-source`).
 *
 * @param url The entry, as `new URL('./name' + (fromSource ? '.ts' : '.js'), import.meta.url)` of its
 * sibling (see {@link threadEntry}).
 * @param imports Modules (URLs) the thread will import by URL once running; send each one through
 * `sourceModule` too.
 */
export function spawnThread(
  url: URL,
  options: Pick<WorkerOptions, 'resourceLimits'> = {},
  imports: readonly string[] = [],
): Worker {
  if (!url.pathname.endsWith('.ts')) return new Worker(url, options);
  const bundled = sourceModule(url.href);
  // A module the thread imports later by its URL (a composer) must load without tsx too.
  const plain = imports.every((href) => !sourceModule(href).endsWith('.ts'));
  if (bundled !== url.href && plain) return new Worker(new URL(bundled), options);
  // Only the resolution conditions carry over: a thread refuses many process-wide flags (--expose-gc...).
  const execArgv = ['--conditions=mailroom-source'];
  process.execArgv.forEach((arg, i) => {
    if (arg.startsWith('--conditions=') || arg.startsWith('-C=')) execArgv.push(arg);
    else if ((arg === '--conditions' || arg === '-C') && process.execArgv[i + 1]) {
      execArgv.push(`--conditions=${process.execArgv[i + 1]}`);
    }
  });
  const boot = `import('tsx/esm/api').then(({ register }) => { register(); return import(${JSON.stringify(url.href)}); })`;
  return new Worker(boot, { ...options, eval: true, execArgv });
}

/**
 * The URL of a thread entry that is a sibling of the module at `moduleUrl` (its `import.meta.url`): in the
 * build every entry is a file next to the bundle (`dist/<name>.js`, tsup entries); from source, a `.ts`.
 */
export function threadEntry(name: string, moduleUrl: string): URL {
  return new URL(`./${name}${moduleUrl.endsWith('.ts') ? '.ts' : '.js'}`, moduleUrl);
}
