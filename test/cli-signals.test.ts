import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it, onTestFinished, vi } from 'vitest';

const root = fileURLToPath(new URL('..', import.meta.url));
const child = fileURLToPath(new URL('./support/signal-child.ts', import.meta.url));

/** The child stopping as the CLI does, with its output and exit code. */
function start() {
  let out = '';
  let err = '';
  const proc = spawn(process.execPath, ['--import', 'tsx', child], { cwd: root });
  // A test that failed before its signals (a wait timed out) leaves no child behind: it would run on.
  onTestFinished(() => {
    if (proc.exitCode === null && proc.signalCode === null) proc.kill('SIGKILL');
  });
  proc.stdout.on('data', (chunk: Buffer) => {
    out += chunk.toString();
  });
  proc.stderr.on('data', (chunk: Buffer) => {
    err += chunk.toString();
  });
  const exit = new Promise<number | null>((resolve) => proc.once('exit', (code) => resolve(code)));
  const saw = (line: string) =>
    vi.waitFor(() => expect(out).toContain(line), { timeout: 20_000, interval: 20 });
  return { proc, exit, saw, err: () => err };
}

describe("the CLI's shutdown on signals", () => {
  it('takes a relayed copy of the signal (the group and a wrapper both send it) as one request: graceful exit 0', async () => {
    const c = start();
    await c.saw('armed');
    c.proc.kill('SIGTERM');
    // The copy comes once the first is being handled (two sent at once would merge in the kernel).
    await c.saw('stopping');
    c.proc.kill('SIGTERM');
    expect(await c.exit).toBe(0);
    expect(c.err()).not.toContain('again');
  }, 30_000);

  it('exits at once on a second signal that comes later (the operator insists)', async () => {
    const c = start();
    await c.saw('armed');
    c.proc.kill('SIGINT');
    await c.saw('stopping');
    // Past the 1.5 s in which a copy relayed by a wrapper is taken as the same request.
    await new Promise((resolve) => setTimeout(resolve, 1_700));
    c.proc.kill('SIGINT');
    expect(await c.exit).toBe(1);
    expect(c.err()).toContain('mailroom: SIGINT again, exiting without waiting');
  }, 30_000);
});
