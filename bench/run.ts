/**
 * `pnpm bench [name...]`: runs each benchmark of this folder in its own process (so one bench's heap and
 * RSS never colour another's), sequentially, and prints the JSON line each one reports.
 */
import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const all = readdirSync(here)
  .filter((f) => f.endsWith('.ts') && f !== 'run.ts')
  .map((f) => f.replace(/\.ts$/, ''))
  .sort();
const wanted = process.argv.slice(2);
const unknown = wanted.filter((w) => !all.includes(w));
if (unknown.length > 0) {
  console.error(`unknown benchmark(s): ${unknown.join(', ')}; available: ${all.join(', ')}`);
  process.exit(2);
}
let failed = 0;
for (const name of wanted.length > 0 ? wanted : all) {
  console.log(`\n## ${name}`);
  const result = spawnSync(
    process.execPath,
    ['--import', 'tsx', '--conditions=mailroom-source', '--expose-gc', join(here, `${name}.ts`)],
    { stdio: 'inherit', env: process.env },
  );
  if (result.status !== 0) failed++;
}
process.exit(failed > 0 ? 1 : 0);
