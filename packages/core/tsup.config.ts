import { defineConfig } from 'tsup';
import { base } from '../../tsup.base.ts';

export default defineConfig({
  ...base,
  // The render thread is its own entry: the pool starts `render-thread.js` next to the bundle that
  // holds it (dist/index.js), and a worker thread cannot load a module that is only part of a bundle.
  entry: {
    index: 'src/index.ts',
    'testing/index': 'src/testing/index.ts',
    'render-thread': 'src/delivery/render-thread.ts',
    'preview-thread': 'src/render/preview-thread.ts',
    'parse-thread': 'src/receiving/parse-thread.ts',
  },
  external: ['vitest', 'fast-check'],
});
