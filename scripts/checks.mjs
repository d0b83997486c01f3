/**
 * `pnpm test`'s first step: the `typecheck`, `lint` and `deps` scripts of the root package.json, at the same
 * time. Each is one process that mostly keeps one core busy (the typecheck ~10 s, dependency-cruiser ~5 s,
 * Biome ~2 s on the 2-core machine), so side by side they end when the typecheck does, instead of after the
 * sum. Each one's output is printed in one block when it ends, under its name; the exit code is the first
 * failing check's (1 if one died by a signal), after all have ended. Plain JavaScript, so that it starts
 * without a TypeScript loader.
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { delimiter } from 'node:path';
import { fileURLToPath } from 'node:url';

const CHECKS = ['typecheck', 'lint', 'deps'];
const root = new URL('..', import.meta.url);
/** @type {Record<string, string>} */
const scripts = JSON.parse(readFileSync(new URL('package.json', root), 'utf8')).scripts;

/**
 * Runs one script's command line in a shell at the root, with node_modules/.bin on PATH, its
 * stdout and stderr kept together, in order.
 * @param {string} name
 * @returns {Promise<{ name: string, code: number, output: string }>}
 */
function run(name) {
  const command = scripts[name];
  if (!command) return Promise.resolve({ name, code: 1, output: `no "${name}" script in package.json\n` });
  return new Promise((resolve) => {
    // node_modules/.bin first, as `pnpm run` sets it, so that `node scripts/checks.mjs` works alone too.
    const bin = fileURLToPath(new URL('node_modules/.bin', root));
    const env = { ...process.env, PATH: `${bin}${delimiter}${process.env.PATH ?? ''}` };
    const child = spawn(command, { cwd: root, env, shell: true, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (chunk) => {
      output += chunk;
    });
    child.stderr.on('data', (chunk) => {
      output += chunk;
    });
    child.on('error', (error) => resolve({ name, code: 1, output: `${output}${error.message}\n` }));
    child.on('close', (code) => resolve({ name, code: code ?? 1, output }));
  });
}

const results = await Promise.all(
  CHECKS.map((name) =>
    run(name).then((result) => {
      const status = result.code === 0 ? 'ok' : `failed (exit ${result.code})`;
      const tail = result.output === '' || result.output.endsWith('\n') ? '' : '\n';
      process.stdout.write(`> ${name}: ${scripts[name] ?? ''}: ${status}\n${result.output}${tail}`);
      return result;
    }),
  ),
);
process.exitCode = results.find((result) => result.code !== 0)?.code ?? 0;
