import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { sourceModule } from '../src/render/source-bundle.js';
import { spawnThread, threadEntry } from '../src/render/spawn-thread.js';

const renderThread = threadEntry(
  'render-thread',
  new URL('../src/delivery/render-pool.ts', import.meta.url).href,
);

describe('threads started from the sources run a bundle of their entry, not tsx', () => {
  it('bundles a .ts entry once per process into one module inside its package', () => {
    const bundled = sourceModule(renderThread.href);
    expect(bundled).not.toBe(renderThread.href);
    expect(bundled).toMatch(
      /\/packages\/core\/node_modules\/\.cache\/mailroom-threads\/render-thread-[0-9a-f]{12}\.mjs$/,
    );
    expect(sourceModule(renderThread.href)).toBe(bundled);
    const code = readFileSync(fileURLToPath(bundled), 'utf8');
    // The core's own modules and the packages are inside it: it imports Node's modules only.
    expect(code).not.toMatch(/from\s+["']\.{1,2}\//);
    expect(code).not.toMatch(/from\s+["']liquidjs["']/);
    expect([...code.matchAll(/^import [^;]*? from ["']([^"']+)["']/gm)].map((m) => m[1])).toSatisfy(
      (names: string[]) => names.length > 0 && names.every((name) => name.startsWith('node:')),
    );
    // liquidjs's own message: the package's code is in the bundle.
    expect(code).toContain('illegal tag syntax');
  });

  it('leaves a module of the build as it is', () => {
    expect(sourceModule('file:///somewhere/dist/render-thread.js')).toBe(
      'file:///somewhere/dist/render-thread.js',
    );
  });

  it('gives back a .ts module it cannot bundle, for tsx to load as before', () => {
    const missing = new URL('./fixtures/no-such-entry.ts', import.meta.url).href;
    expect(sourceModule(missing)).toBe(missing);
  });

  it('starts a thread from a .ts entry that imports other sources, with no TypeScript loader in the thread', async () => {
    const entry = new URL('./fixtures/thread-entry.ts', import.meta.url);
    const worker = spawnThread(entry);
    try {
      const reply = await new Promise<unknown>((resolve, reject) => {
        worker.once('message', resolve);
        worker.once('error', reject);
      });
      // The thread's own module is the bundle (tsx would have loaded the .ts file itself).
      expect(reply).toEqual({ sum: 42, url: expect.stringMatching(/thread-entry-[0-9a-f]{12}\.mjs$/) });
    } finally {
      await worker.terminate();
    }
  });
});
