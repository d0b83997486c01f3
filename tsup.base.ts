import type { Options } from 'tsup';

/** The one build config every package spreads into its own `tsup.config.ts`. */
export const base: Options = {
  format: ['esm'],
  target: 'node20',
  dts: true,
  sourcemap: true,
  clean: true,
  splitting: false,
  treeshake: true,
};
