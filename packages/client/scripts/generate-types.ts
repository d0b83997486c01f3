/** Writes `src/openapi-types.ts` (see openapi-types.ts); run by `build` and `generate`. */
import { writeFileSync } from 'node:fs';
import { OPENAPI_TYPES_FILE, renderOpenApiTypes } from './openapi-types.js';

writeFileSync(OPENAPI_TYPES_FILE, await renderOpenApiTypes());
process.stdout.write(`wrote ${OPENAPI_TYPES_FILE}\n`);
