/** `pnpm build`: every package's `dist/` (see `build/build-packages.ts`). */
import { buildPackages } from './build/build-packages.js';

await buildPackages();
