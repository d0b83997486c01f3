import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

const src = (p: string) => fileURLToPath(new URL(`./packages/${p}`, import.meta.url));

// Tests run from the TypeScript sources: no build is needed on a clean clone.
export default defineConfig({
  resolve: {
    alias: [
      { find: /^@mailroom\/core\/testing$/, replacement: src('core/src/testing/index.ts') },
      { find: /^@mailroom\/core$/, replacement: src('core/src/index.ts') },
      { find: /^@mailroom\/memory$/, replacement: src('memory/src/index.ts') },
      { find: /^@mailroom\/sql$/, replacement: src('sql/src/index.ts') },
      { find: /^@mailroom\/smtp$/, replacement: src('smtp/src/index.ts') },
      { find: /^@mailroom\/ses$/, replacement: src('ses/src/index.ts') },
      { find: /^@mailroom\/http\/express$/, replacement: src('http/src/binders/express.ts') },
      { find: /^@mailroom\/http\/fastify$/, replacement: src('http/src/binders/fastify.ts') },
      { find: /^@mailroom\/http$/, replacement: src('http/src/index.ts') },
      { find: /^@mailroom\/cli$/, replacement: src('cli/src/index.ts') },
      { find: /^@mailroom\/client$/, replacement: src('client/src/index.ts') },
    ],
  },
  test: {
    include: ['packages/*/test/**/*.test.ts', 'test/**/*.test.ts', 'examples/*/test/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
  },
});
