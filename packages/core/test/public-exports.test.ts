import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

// The names a user can import (values and types), listed by the TypeScript checker: a move inside the core
// must not add or drop one by accident. A deliberate change updates the list in the same commit.
const here = (p: string) => fileURLToPath(new URL(p, import.meta.url));
const ENTRIES = {
  '@mailroom/core': { entry: here('../src/index.ts'), list: here('./fixtures/public-exports-core.txt') },
  '@mailroom/core/testing': {
    entry: here('../src/testing/index.ts'),
    list: here('./fixtures/public-exports-testing.txt'),
  },
};

function exportsOf(entries: string[]): Map<string, string[]> {
  const program = ts.createProgram(entries, {
    strict: true,
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    target: ts.ScriptTarget.ES2022,
    skipLibCheck: true,
    noEmit: true,
  });
  const checker = program.getTypeChecker();
  const result = new Map<string, string[]>();
  for (const entry of entries) {
    const file = program.getSourceFile(entry);
    const symbol = file && checker.getSymbolAtLocation(file);
    if (!symbol) throw new Error(`no module symbol for ${entry}`);
    result.set(
      entry,
      checker
        .getExportsOfModule(symbol)
        .map((s) => s.name)
        .sort(),
    );
  }
  return result;
}

describe('public exports', () => {
  const found = exportsOf(Object.values(ENTRIES).map((e) => e.entry));
  for (const [name, { entry, list }] of Object.entries(ENTRIES)) {
    it(`${name} exports exactly the listed names`, () => {
      const expected = readFileSync(list, 'utf8').split('\n').filter(Boolean);
      expect(found.get(entry)).toEqual(expected);
    });
  }
});
