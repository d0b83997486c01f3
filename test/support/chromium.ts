/**
 * Chromium for the browser tests (playwright-core drives a system browser; it never downloads one).
 * Every browser test gets its browser from here: {@link launchChromium} in a `beforeAll` given
 * {@link CHROMIUM_SETUP_TIMEOUT_MS}. The executable is `MAILROOM_CHROMIUM` if set, else `chromium`,
 * `chromium-browser` or `google-chrome` on `PATH`; on a machine that has none but can install one (root and
 * `apt-get`), Debian's `chromium` is installed once, test files in other forks waiting on a lock file.
 * Otherwise the set-up fails with one line that says how to get one: a browser test never skips silently.
 */
import { spawn } from 'node:child_process';
import { accessSync, constants, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { type BrowserContext, chromium } from 'playwright-core';

/** The names looked up on `PATH`, in order. */
export const CHROMIUM_NAMES = ['chromium', 'chromium-browser', 'google-chrome'] as const;

/**
 * Time for a `beforeAll` that launches Chromium: installing it with apt-get (an index update and a
 * download of about 100 MB) can take minutes on a cold machine; a found browser starts in a second.
 */
export const CHROMIUM_SETUP_TIMEOUT_MS = 15 * 60_000;

/** Flags for a headless browser in a container: no sandbox (root), no GPU, no traffic of its own. */
export const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/** One line that tells a developer how to get a browser (the whole message of a failed set-up). */
const HOW_TO_INSTALL =
  'install Chromium (Debian/Ubuntu: sudo apt-get install -y chromium) or set MAILROOM_CHROMIUM to a Chromium or Chrome executable';

/** Held while one process runs apt-get; the others wait for it to go, then look again. */
const LOCK_FILE = join(tmpdir(), 'mailroom-chromium-install.lock');

let found: Promise<string> | undefined;

/**
 * The path of a Chromium executable, found or (where the machine allows) installed on first call; cached
 * for the process.
 * @throws Error with one line saying how to install a browser, when there is none and none can be installed
 */
export function chromiumExecutable(): Promise<string> {
  found ??= findOrInstall();
  found.catch(() => {
    found = undefined;
  });
  return found;
}

/**
 * A persistent headless Chromium context on `profileDir` with {@link CHROMIUM_ARGS} (plus `args`).
 * Call it in a `beforeAll(..., CHROMIUM_SETUP_TIMEOUT_MS)`.
 */
export async function launchChromium(
  profileDir: string,
  options: Omit<NonNullable<Parameters<typeof chromium.launchPersistentContext>[1]>, 'executablePath'> = {},
): Promise<BrowserContext> {
  return chromium.launchPersistentContext(profileDir, {
    ...options,
    executablePath: await chromiumExecutable(),
    args: [...CHROMIUM_ARGS, ...(options.args ?? [])],
  });
}

async function findOrInstall(): Promise<string> {
  const configured = process.env.MAILROOM_CHROMIUM?.trim();
  if (configured) {
    if (isExecutable(configured)) return configured;
    throw new Error(`MAILROOM_CHROMIUM=${configured} is not an executable file: ${HOW_TO_INSTALL}`);
  }
  const onPath = findOnPath();
  if (onPath) return onPath;
  const aptGet = which('apt-get');
  if (process.getuid?.() !== 0 || !aptGet) {
    throw new Error(`No Chromium for the browser tests: ${HOW_TO_INSTALL}`);
  }
  await withInstallLock(async () => {
    if (findOnPath()) return; // another test file installed it while this one waited
    await installChromium(aptGet);
  });
  const installed = findOnPath();
  if (!installed) throw new Error(`apt-get installed chromium but it is not on PATH: ${HOW_TO_INSTALL}`);
  return installed;
}

/** `apt-get install -y chromium`, with `apt-get update` first when the package lists are stale or absent. */
async function installChromium(aptGet: string): Promise<void> {
  process.stderr.write("mailroom tests: no Chromium found, installing Debian's chromium (apt-get)...\n");
  const install = () => run(aptGet, ['install', '-y', 'chromium']);
  if ((await install()).code === 0) return;
  const update = await run(aptGet, ['update']);
  if (update.code !== 0) {
    throw new Error(`apt-get update failed (${lastLine(update.output)}): ${HOW_TO_INSTALL}`);
  }
  const second = await install();
  if (second.code !== 0) {
    throw new Error(`apt-get install chromium failed (${lastLine(second.output)}): ${HOW_TO_INSTALL}`);
  }
}

/**
 * Runs `fn` while holding the install lock (a file created exclusively, holding this process's id). A lock
 * whose process is gone is taken over; waiting gives up with the set-up's own timeout.
 */
async function withInstallLock(fn: () => Promise<void>): Promise<void> {
  for (;;) {
    try {
      const fd = openSync(LOCK_FILE, 'wx');
      writeFileSync(fd, String(process.pid));
      break;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      if (!holderAlive()) rmSync(LOCK_FILE, { force: true });
      else await sleep(500);
    }
  }
  try {
    await fn();
  } finally {
    rmSync(LOCK_FILE, { force: true });
  }
}

/** Whether the process named in the lock file still runs (an unreadable or empty file counts as alive). */
function holderAlive(): boolean {
  let pid: number;
  try {
    pid = Number(readFileSync(LOCK_FILE, 'utf8'));
  } catch {
    return true; // just created, or just removed: look again shortly
  }
  if (!Number.isInteger(pid) || pid <= 0) return true;
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function run(command: string, args: string[]): Promise<{ code: number; output: string }> {
  return new Promise((resolve) => {
    const child = spawn(command, args, {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.on('error', (error) => resolve({ code: -1, output: error.message }));
    child.on('close', (code) => resolve({ code: code ?? -1, output }));
  });
}

function lastLine(output: string): string {
  return output.trim().split('\n').pop()?.trim() || 'no output';
}

function findOnPath(): string | undefined {
  for (const name of CHROMIUM_NAMES) {
    const path = which(name);
    if (path) return path;
  }
  return undefined;
}

function which(name: string): string | undefined {
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    if (dir && isExecutable(join(dir, name))) return join(dir, name);
  }
  return undefined;
}

function isExecutable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}
