import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { OPENAPI_TYPES_FILE, renderOpenApiTypes } from '../scripts/openapi-types.js';

describe('the committed OpenAPI types', () => {
  // A route or schema changed in @mailroom/http without `pnpm --filter @mailroom/client generate`
  // leaves the client typed against the old document: this fails until the file is regenerated.
  it('are what openapi-typescript makes of the document @mailroom/http serves today', async () => {
    const committed = readFileSync(OPENAPI_TYPES_FILE, 'utf8');
    const fresh = await renderOpenApiTypes();
    expect(committed === fresh, 'stale: run `npx --yes pnpm@10 --filter @mailroom/client generate`').toBe(
      true,
    );
  });

  it('name every path of the document', async () => {
    const { buildOpenApiDocument } = await import('@mailroom/http');
    const paths = Object.keys(buildOpenApiDocument('').paths as object);
    const committed = readFileSync(OPENAPI_TYPES_FILE, 'utf8');
    for (const path of paths) expect(committed, path).toContain(`    "${path}": {`);
  });
});
