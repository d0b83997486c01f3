/** Writes `src/openapi-types.ts` (see openapi-types.ts); run by `build` and `generate`. */

import { writeFileSync } from 'node:fs';
import { register } from 'node:module';

// @mailroom/http from its sources (the workspace's `mailroom-source` export condition, as bin/mailroom.js
// adds it), so the types follow the document as written, without a build of it first. Here rather than
// as a flag of the script: the published manifest must not name the condition.
register(
  'data:text/javascript,export function resolve(specifier, context, next) {' +
    ' return next(specifier, { ...context, conditions: [...context.conditions, "mailroom-source"] }); }',
);
const { OPENAPI_TYPES_FILE, renderOpenApiTypes } = await import('./openapi-types.js');
writeFileSync(OPENAPI_TYPES_FILE, await renderOpenApiTypes());
process.stdout.write(`wrote ${OPENAPI_TYPES_FILE}\n`);
