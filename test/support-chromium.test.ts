import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';

/**
 * How the browser tests find Chromium (test/support/chromium.ts): MAILROOM_CHROMIUM first, then PATH, and a
 * one-line failure that says how to install one where nothing is found and apt-get is out of reach. (The
 * install itself is proven by the browser tests on a machine without Chromium, as CI's is.)
 */
describe('the browser tests find Chromium', () => {
  let dir: string;
  const saved = { path: process.env.PATH, chromium: process.env.MAILROOM_CHROMIUM };

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'mailroom-find-chromium-'));
    vi.resetModules(); // the found path is cached per module instance
  });

  afterEach(() => {
    process.env.PATH = saved.path;
    if (saved.chromium === undefined) delete process.env.MAILROOM_CHROMIUM;
    else process.env.MAILROOM_CHROMIUM = saved.chromium;
    rmSync(dir, { recursive: true, force: true });
  });

  /** A fake browser: an executable file named `name` in the temporary folder. */
  function executable(name: string): string {
    const path = join(dir, name);
    writeFileSync(path, '#!/bin/sh\nexit 0\n');
    chmodSync(path, 0o755);
    return path;
  }

  const load = () => import('./support/chromium.js');

  it('takes MAILROOM_CHROMIUM when it names an executable, before anything on PATH', async () => {
    process.env.PATH = dir;
    executable('chromium');
    process.env.MAILROOM_CHROMIUM = executable('my-chrome');
    expect(await (await load()).chromiumExecutable()).toBe(join(dir, 'my-chrome'));
  });

  it('fails in one line when MAILROOM_CHROMIUM names no executable', async () => {
    process.env.MAILROOM_CHROMIUM = join(dir, 'missing');
    const error = await (await load()).chromiumExecutable().catch((e: unknown) => e as Error);
    expect(error).toBeInstanceOf(Error);
    expect((error as Error).message).toMatch(
      /^MAILROOM_CHROMIUM=.*missing is not an executable file: install/,
    );
    expect((error as Error).message).not.toContain('\n');
  });

  it('looks for chromium, chromium-browser and google-chrome on PATH, in that order', async () => {
    delete process.env.MAILROOM_CHROMIUM;
    process.env.PATH = dir;
    executable('google-chrome');
    expect(await (await load()).chromiumExecutable()).toBe(join(dir, 'google-chrome'));
    vi.resetModules();
    executable('chromium-browser');
    expect(await (await load()).chromiumExecutable()).toBe(join(dir, 'chromium-browser'));
  });

  it('without a browser or apt-get, fails with one line that says how to install one', async () => {
    delete process.env.MAILROOM_CHROMIUM;
    process.env.PATH = dir; // nothing here, apt-get included
    const error = await (await load()).chromiumExecutable().catch((e: unknown) => e as Error);
    expect((error as Error).message).toBe(
      'No Chromium for the browser tests: install Chromium (Debian/Ubuntu: sudo apt-get install -y chromium) or set MAILROOM_CHROMIUM to a Chromium or Chrome executable',
    );
  });
});
