import { defineConfig } from 'tsup';
import { base } from '../../tsup.base.ts';

export default defineConfig({
  ...base,
  entry: ['src/index.ts', 'src/testing/index.ts'],
  external: ['vitest'],
});
