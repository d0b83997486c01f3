import { fileURLToPath } from 'node:url';
import type { Options } from 'tsup';

/** The one build config every package spreads into its own `tsup.config.ts`. */
export const base: Options = {
  // Not the root tsconfig.json: its `paths` point `@mailroom/*` at the sources, so that each package's
  // declaration build would load and check the sources of every package it imports (the cli's: nearly all
  // of them). Without them an import of another package reads that package's built declarations
  // (`pnpm -r build` builds a package's dependencies before it): the same output, a fraction of the work.
  // By absolute path: a build may run from another folder (test/build-render-thread.test.ts runs the core's
  // config from the repository's root).
  tsconfig: fileURLToPath(new URL('./tsconfig.build.json', import.meta.url)),
  format: ['esm'],
  target: 'node20',
  dts: true,
  sourcemap: true,
  clean: true,
  splitting: false,
  treeshake: true,
};
