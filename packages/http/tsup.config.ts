import { defineConfig } from 'tsup';
import { base } from '../../tsup.base.ts';

// Named entries: the binders live in src/binders/, their builds stay dist/express.js and dist/fastify.js
// (the `./express` and `./fastify` exports).
export default defineConfig({
  ...base,
  entry: { index: 'src/index.ts', express: 'src/binders/express.ts', fastify: 'src/binders/fastify.ts' },
});
