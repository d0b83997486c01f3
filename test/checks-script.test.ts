/**
 * scripts/checks.mjs, the first step of the README's test command: it runs the root package.json's
 * `typecheck`, `lint` and `deps` scripts side by side and fails when any of them fails. Run here on a copy
 * with stand-in scripts, so that the test proves the behaviour without the real checks' minutes.
 */
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';

const SCRIPT = fileURLToPath(new URL('../scripts/checks.mjs', import.meta.url));
const folders: string[] = [];

/** A folder with scripts/checks.mjs and a package.json holding `scripts`; returns the run's result. */
function runChecks(scripts: Record<string, string>): { code: number | null; output: string } {
  const dir = mkdtempSync(join(tmpdir(), 'mailroom-checks-'));
  folders.push(dir);
  mkdirSync(join(dir, 'scripts'));
  copyFileSync(SCRIPT, join(dir, 'scripts/checks.mjs'));
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ type: 'module', scripts }));
  const result = spawnSync(process.execPath, ['scripts/checks.mjs'], {
    cwd: dir,
    encoding: 'utf8',
    timeout: 30_000,
  });
  return { code: result.status, output: `${result.stdout}${result.stderr}` };
}

/** A shell command line running `code` with this Node. */
const node = (code: string) => `"${process.execPath}" -e ${JSON.stringify(code)}`;

/** Waits (up to 10 s) for `file` to exist, then exits 0; exits 9 if it never comes. */
const waitFor = (file: string) =>
  node(
    `const fs=require('fs');const end=Date.now()+10000;(function poll(){if(fs.existsSync(${JSON.stringify(file)}))process.exit(0);if(Date.now()>end)process.exit(9);setTimeout(poll,20)})()`,
  );

afterAll(() => {
  for (const dir of folders) rmSync(dir, { recursive: true, force: true });
});

describe('scripts/checks.mjs', () => {
  it('runs typecheck, lint and deps at the same time, and passes when all pass', () => {
    // Each waits for a file that a later one writes: run one after another, the first would wait in vain.
    const marks = mkdtempSync(join(tmpdir(), 'mailroom-checks-marks-'));
    folders.push(marks);
    const result = runChecks({
      typecheck: `${waitFor(join(marks, 'deps'))} && ${node("console.log('types ok')")}`,
      lint: `${node(`require('fs').writeFileSync(${JSON.stringify(join(marks, 'lint'))},'')`)} && ${waitFor(join(marks, 'deps'))}`,
      deps: `${waitFor(join(marks, 'lint'))} && ${node(`require('fs').writeFileSync(${JSON.stringify(join(marks, 'deps'))},'');console.log('rules ok')`)}`,
    });
    expect(result.code, result.output).toBe(0);
    expect(result.output).toMatch(/> typecheck: .*: ok\ntypes ok\n/);
    expect(result.output).toMatch(/> deps: .*: ok\nrules ok\n/);
    expect(result.output).toMatch(/> lint: .*: ok\n/);
  });

  it("fails with the failing check's exit code, after printing every check's output", () => {
    const result = runChecks({
      typecheck: node("console.log('types ok')"),
      lint: node("console.error('lint: 2 errors'); process.exit(3)"),
      deps: node("console.log('rules ok')"),
    });
    expect(result.code).toBe(3);
    expect(result.output).toContain('> lint: ');
    expect(result.output).toContain(': failed (exit 3)\nlint: 2 errors\n');
    expect(result.output).toContain('types ok');
    expect(result.output).toContain('rules ok');
  });

  it('fails when a check is missing from package.json', () => {
    const result = runChecks({ typecheck: node('0'), lint: node('0') });
    expect(result.code).toBe(1);
    expect(result.output).toContain('no "deps" script in package.json');
  });
});
