/**
 * An executable the tests need from the system (Chromium, PgBouncer), found or installed once: the one
 * an environment variable names, else the first of its names on `PATH` (and in `extraDirs`); on a
 * machine that has none but can install one (root and `apt-get`), its Debian package is installed, test
 * files in other forks waiting on a lock file and then taking what it installed. Otherwise it fails with
 * one line that says how to get one. test/support/chromium.ts and packages/sql/test/support/pgbouncer.ts
 * describe theirs with a {@link SystemTool}.
 */
import { spawn } from 'node:child_process';
import { accessSync, constants, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

/** What to look for and how to install it. */
export interface SystemTool {
  /** The Debian package that provides it (`apt-get install -y <debPackage>`). */
  readonly debPackage: string;
  /** The executable names looked up, in order. */
  readonly names: readonly string[];
  /** The environment variable that names the executable, looked at first (`MAILROOM_CHROMIUM`). */
  readonly envVar: string;
  /** Folders searched after `PATH` (`/usr/sbin` for daemons that are not on a user's `PATH`). */
  readonly extraDirs?: readonly string[];
  /** `--no-install-recommends` when installing. */
  readonly noRecommends?: boolean;
  /** The start of the message when there is none: `No Chromium for the browser tests`. */
  readonly missing: string;
  /** One line that tells a developer how to get it (the end of every failure message). */
  readonly howToInstall: string;
}

const found = new Map<string, Promise<string>>();

/**
 * The path of `tool`'s executable, found or (where the machine allows) installed on first call; cached
 * for the process, a failure not.
 * @throws Error with one line ending in `tool.howToInstall`, when there is none and none can be installed
 */
export function findOrInstall(tool: SystemTool): Promise<string> {
  let path = found.get(tool.debPackage);
  if (!path) {
    path = locateOrInstall(tool);
    found.set(tool.debPackage, path);
    path.catch(() => found.delete(tool.debPackage));
  }
  return path;
}

async function locateOrInstall(tool: SystemTool): Promise<string> {
  const configured = process.env[tool.envVar]?.trim();
  if (configured) {
    if (isExecutable(configured)) return configured;
    throw new Error(`${tool.envVar}=${configured} is not an executable file: ${tool.howToInstall}`);
  }
  const there = locate(tool);
  if (there) return there;
  const aptGet = which('apt-get', []);
  if (process.getuid?.() !== 0 || !aptGet) throw new Error(`${tool.missing}: ${tool.howToInstall}`);
  await withInstallLock(join(tmpdir(), `mailroom-${tool.debPackage}-install.lock`), async () => {
    if (locate(tool)) return; // another test file installed it while this one waited
    await install(aptGet, tool);
  });
  const installed = locate(tool);
  if (!installed) {
    throw new Error(
      `apt-get installed ${tool.debPackage} but no ${tool.names[0]} is found: ${tool.howToInstall}`,
    );
  }
  return installed;
}

/** `apt-get install -y`, with `apt-get update` first when the package lists are stale or absent. */
async function install(aptGet: string, tool: SystemTool): Promise<void> {
  process.stderr.write(
    `mailroom tests: no ${tool.names[0]} found, installing Debian's ${tool.debPackage} (apt-get)...\n`,
  );
  const flags = tool.noRecommends ? ['--no-install-recommends'] : [];
  const attempt = () => run(aptGet, ['install', '-y', ...flags, tool.debPackage]);
  if ((await attempt()).code === 0) return;
  const update = await run(aptGet, ['update']);
  if (update.code !== 0) {
    throw new Error(`apt-get update failed (${lastLine(update.output)}): ${tool.howToInstall}`);
  }
  const second = await attempt();
  if (second.code !== 0) {
    throw new Error(
      `apt-get install ${tool.debPackage} failed (${lastLine(second.output)}): ${tool.howToInstall}`,
    );
  }
}

/**
 * Runs `fn` while holding the lock `file` (created exclusively, holding this process's id). A lock whose
 * process is gone is taken over; waiting ends with the caller's set-up timeout.
 */
async function withInstallLock(file: string, fn: () => Promise<void>): Promise<void> {
  for (;;) {
    try {
      const fd = openSync(file, 'wx');
      writeFileSync(fd, String(process.pid));
      break;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      if (!holderAlive(file)) rmSync(file, { force: true });
      else await sleep(500);
    }
  }
  try {
    await fn();
  } finally {
    rmSync(file, { force: true });
  }
}

/** Whether the process named in the lock file still runs (an unreadable or empty file counts as alive). */
function holderAlive(file: string): boolean {
  let pid: number;
  try {
    pid = Number(readFileSync(file, 'utf8'));
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

/** The first of the tool's names found on `PATH` or in its extra folders. */
function locate(tool: SystemTool): string | undefined {
  for (const name of tool.names) {
    const path = which(name, tool.extraDirs ?? []);
    if (path) return path;
  }
  return undefined;
}

function which(name: string, extraDirs: readonly string[]): string | undefined {
  for (const dir of [...(process.env.PATH ?? '').split(delimiter), ...extraDirs]) {
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
