/**
 * dependency-cruiser's CLI on several trees in one process, for `dependency-layers.test.ts` (issue 37).
 * Usage: `node --import tsx test/support/depcruise-trees.ts <config> <dir>...`. Prints one JSON array on
 * stdout: per folder, in order, `{ dir, code, output }`, where `code` and `output` are what
 * `depcruise packages --config <config> --output-type err` exits with and prints (stdout and stderr) when
 * started in that folder. Each start of the CLI loads dependency-cruiser and TypeScript again (about 2.5
 * CPU s); this calls the CLI's own entry (`src/cli/index.mjs`, the function its bin calls) once per folder,
 * with the options its bin's parser makes of those arguments, in the folder as working directory (the
 * CLI resolves `packages`, the tsconfig and the rules' paths from it). dependency-cruiser clears its
 * caches before and after each cruise, so one folder's modules do not reach the next.
 */
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';

/** The output streams the CLI's entry writes its errors to. */
interface CliStreams {
  stdout: NodeJS.WritableStream;
  stderr: NodeJS.WritableStream;
}

/** `src/cli/index.mjs`'s default export: what the bin calls with its arguments and parsed options. */
type ExecuteCli = (
  filesOrDirectories: string[],
  options: Record<string, unknown>,
  streams?: CliStreams,
) => Promise<number>;

const [config, ...dirs] = process.argv.slice(2);
if (!config || dirs.length === 0) throw new Error('usage: depcruise-trees <config> <dir>...');

// The main entry is `<package>/src/main/index.mjs`; the CLI's entry is not exported, so it is named by path.
const packageDir = dirname(dirname(dirname(new URL(import.meta.resolve('dependency-cruiser')).pathname)));
const executeCli = (
  (await import(pathToFileURL(join(packageDir, 'src/cli/index.mjs')).href)) as { default: ExecuteCli }
).default;

// What the bin's parser (commander) makes of `packages --config <config> --output-type err`: its defaults
// for the options not given, as it passes them.
const options = { config, outputType: 'err', metrics: false, outputTo: '-', focusDepth: 1 };

const results: { dir: string; code: number; output: string }[] = [];
const write = process.stdout.write.bind(process.stdout);
for (const dir of dirs) {
  let output = '';
  const collect = (chunk: string | Uint8Array): boolean => {
    output += typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString();
    return true;
  };
  // The report goes to process.stdout (`--output-to -`), errors to the streams' stderr.
  const stderr = { write: collect } as unknown as NodeJS.WritableStream;
  process.chdir(dir);
  process.stdout.write = collect as typeof process.stdout.write;
  let code: number;
  try {
    code = await executeCli(['packages'], { ...options }, { stdout: process.stdout, stderr });
  } finally {
    process.stdout.write = write;
  }
  results.push({ dir, code, output });
}
write(`${JSON.stringify(results)}\n`);
