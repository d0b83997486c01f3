import { defineConfig } from 'tsup';
import { base } from '../../tsup.base.ts';

export default defineConfig({ ...base, entry: ['src/index.ts'] });
