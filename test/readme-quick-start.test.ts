import { type ChildProcess, execFile, execFileSync, spawn } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it, vi } from 'vitest';

/**
 * The README's quick start, run as written in a fresh copy of the repository (the files a clone would
 * have), so that the README and the code cannot drift apart: the install-and-start line prints a curl line,
 * that curl line sends a message, the message lands in .mailroom/outbox/. The README's test command is not
 * run here (it would run this test again); instead `.ci/run` must run exactly the README's two commands,
 * and the test command must run the typecheck, Biome and the dependency rules before vitest.
 */
const ROOT = fileURLToPath(new URL('..', import.meta.url));
const run = promisify(execFile);

/** The commands of the README's quick-start block, without their trailing comments. */
function quickStartCommands(): string[] {
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
  const section = readme.split(/^## Quick start$/m)[1] ?? '';
  const block = /```sh\n([\s\S]*?)```/.exec(section)?.[1] ?? '';
  return block
    .split('\n')
    .map((line) => line.replace(/\s+#.*$/, '').trim())
    .filter((line) => line !== '');
}

/** The commands `.ci/run` runs through pnpm, in order. */
function ciCommands(): string[] {
  return readFileSync(join(ROOT, '.ci/run'), 'utf8')
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line.startsWith('npx '));
}

/** The environment of a new user's shell: none of this run's test, pnpm-script or Mailroom settings. */
function freshEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (/^(MAILROOM_|VITEST|npm_lifecycle_|npm_package_)/.test(key) || key === 'NODE_ENV') continue;
    env[key] = value;
  }
  return env;
}

describe('the README quick start', () => {
  const commands = quickStartCommands();
  let copy: string | undefined;
  let server: ChildProcess | undefined;

  afterAll(async () => {
    if (server?.pid && server.exitCode === null && server.signalCode === null) {
      process.kill(-server.pid, 'SIGKILL');
    }
    if (copy) rmSync(copy, { recursive: true, force: true });
  });

  it('has the two commands: install && start, then test', () => {
    expect(commands).toEqual([
      'npx --yes pnpm@10 install && npx --yes pnpm@10 start',
      'npx --yes pnpm@10 test',
    ]);
  });

  it('.ci/run runs exactly the README commands, and sets or installs nothing they lack', () => {
    const [installAndStart = '', test = ''] = commands;
    const install = installAndStart.split(' && ')[0];
    expect(ciCommands()).toEqual([install, test]);
    const code = readFileSync(join(ROOT, '.ci/run'), 'utf8')
      .split('\n')
      .filter((line) => !line.trim().startsWith('#'));
    expect(code.filter((line) => /MAILROOM_|apt-get|chromium/i.test(line))).toEqual([]);
  });

  it('the test command checks types, lint and the dependency rules before vitest, as CI runs it', () => {
    const scripts: Record<string, string> = JSON.parse(
      readFileSync(join(ROOT, 'package.json'), 'utf8'),
    ).scripts;
    const steps = (scripts.test ?? '').split(' && ');
    expect(steps).toEqual(['node scripts/checks.mjs', scripts['test:vitest']]);
    expect(scripts['test:vitest']).toBe('vitest run');
    // scripts/checks.mjs runs these three scripts side by side (and fails when one fails: checks-script.test.ts).
    const checks = readFileSync(join(ROOT, 'scripts/checks.mjs'), 'utf8');
    expect(checks).toContain("const CHECKS = ['typecheck', 'lint', 'deps'];");
    // Inside a script started by `npx pnpm`, a nested `pnpm` may not be on PATH: binaries only.
    const commands = [scripts.typecheck, scripts.lint, scripts.deps, scripts['test:vitest']];
    expect(commands.every((step) => typeof step === 'string' && !/^(pnpm|npx|npm)\b/.test(step))).toBe(true);
  });

  it('install && start, as written, serves the printed curl line, writes the .eml, and the printed template command works', {
    timeout: 300_000,
  }, async () => {
    copy = mkdtempSync(join(tmpdir(), 'mailroom-readme-'));
    const files = execFileSync('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], {
      cwd: ROOT,
      encoding: 'utf8',
    })
      .split('\0')
      .filter((file) => file !== '' && existsSync(join(ROOT, file)));
    expect(files).toContain('README.md');
    for (const file of files) {
      mkdirSync(dirname(join(copy, file)), { recursive: true });
      cpSync(join(ROOT, file), join(copy, file));
    }

    let out = '';
    // Any free port (PORT is the documented override) so that parallel runs and a running server do not
    // collide; the pnpm store is warm, so the install need not ask the registry about every package.
    const started = spawn('sh', ['-c', commands[0] ?? 'false'], {
      cwd: copy,
      env: { ...freshEnv(), PORT: '0', npm_config_prefer_offline: 'true' },
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true, // its own process group: npx, pnpm, tsx and node stop together
    });
    server = started;
    started.stdout?.on('data', (chunk: Buffer) => (out += chunk.toString()));
    started.stderr?.on('data', (chunk: Buffer) => (out += chunk.toString()));

    const curl = await vi.waitFor(
      () => {
        if (started.exitCode !== null)
          throw new Error(`the quick start exited (${started.exitCode}):\n${out}`);
        const line = /^\s+(curl -s http:\/\/127\.0\.0\.1:\d+\/send\/mail .+)$/m.exec(out)?.[1];
        if (!line) throw new Error(`no curl line yet:\n${out}`);
        return line;
      },
      { timeout: 240_000, interval: 250 },
    );
    expect(out).toMatch(/Mailroom is listening on http:\/\/127\.0\.0\.1:\d+/);

    // The printed line, run by the shell as a user would paste it.
    const { stdout } = await run('sh', ['-c', curl], { timeout: 30_000 });
    expect(JSON.parse(stdout)).toMatchObject({
      message: 'Message accepted',
      statusCode: 200,
      data: { ref: expect.stringMatching(/^msg_/), status: 'queued' },
    });
    const outbox = join(copy, '.mailroom/outbox');
    const eml = await vi.waitFor(
      () => {
        const found = existsSync(outbox) ? readdirSync(outbox).filter((f) => f.endsWith('.eml')) : [];
        if (found.length !== 1) throw new Error(`${found.length} .eml files in ${outbox}`);
        return readFileSync(join(outbox, found[0] ?? ''), 'utf8');
      },
      { timeout: 30_000, interval: 200 },
    );
    expect(eml).toMatch(/^Subject: Hello Ada$/m);
    expect(eml).toMatch(/^To: .*<ada@example\.test>$/m);

    // The command printed to replace the demo template, as a user pastes it in the clone (issue 37): it
    // starts the CLI as the quick start does, and names the welcome.mjml the first start wrote.
    const templateAdd = /^\s+(npx --yes pnpm@10 mailroom template add --project prj_\w+ .+)$/m.exec(out)?.[1];
    expect(templateAdd, out).toMatch(/--ref welcome --file welcome\.mjml$/);
    expect(readFileSync(join(copy, 'welcome.mjml'), 'utf8')).toContain('<mjml>');
    const added = await run('sh', ['-c', templateAdd ?? 'false'], {
      cwd: copy,
      env: { ...freshEnv(), npm_config_prefer_offline: 'true' },
      timeout: 120_000,
    });
    expect(added.stdout).toMatch(/Stored template welcome version 2/);

    // Ctrl-C's signal to the whole group; 'close' waits for every process holding the output to exit.
    const closed = new Promise((resolve) => started.once('close', resolve));
    if (started.pid) process.kill(-started.pid, 'SIGTERM');
    await closed;
    expect(out).toContain('mailroom: stopped');
  });
});
