/**
 * The packages' declarations from one TypeScript program. A package's own tsup build makes a program of
 * its entries and checks it (tsup's rollup-plugin-dts emits with `noEmitOnError`): eight programs, each
 * loading TypeScript, the Node types and the typings of its dependencies again, and the core checked
 * once in full on its own (about 125 CPU seconds for the eight). One program of every entry, with the
 * root tsconfig's `paths` from each `@mailroom/*` name to its sources, checks everything once (about 40)
 * and writes each source file's declaration as a per-package `.d.ts` tree; `package-build.ts` then
 * bundles each package's tree with the same plugin, into the same `dist/*.d.ts` files byte for byte
 * (compared against per-package builds; BENCHMARKS.md, "Test suite").
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import ts from 'typescript';

/** The compiler options of tsup's declaration build (its rollup plugin's), over the root tsconfig's. */
const DTS_OPTIONS: ts.CompilerOptions = {
  noEmit: false,
  declaration: true,
  emitDeclarationOnly: true,
  noEmitOnError: true,
  checkJs: false,
  declarationMap: false,
  skipLibCheck: true,
  preserveSymlinks: false,
  sourceMap: false,
  target: ts.ScriptTarget.ESNext,
};

const formatHost = (root: string): ts.FormatDiagnosticsHost => ({
  getCanonicalFileName: (file) => file,
  getCurrentDirectory: () => root,
  getNewLine: () => '\n',
});

/**
 * Checks the program of `entries` (absolute paths of source files under `root/packages`) and writes the
 * declaration of every source file it holds under `outDir`, as `outDir/<package>/src/...d.ts`, each
 * with an empty `.ts` beside it (see {@link writeDeclaration}). Throws with TypeScript's diagnostics on
 * any error, as a package's tsup build fails on one.
 */
export function emitDeclarations(root: string, entries: readonly string[], outDir: string): void {
  const config = ts.getParsedCommandLineOfConfigFile(
    join(root, 'tsconfig.json'),
    {},
    {
      ...ts.sys,
      onUnRecoverableConfigFileDiagnostic: (diagnostic) => {
        throw new Error(ts.formatDiagnostic(diagnostic, formatHost(root)));
      },
    },
  );
  if (!config) throw new Error('tsconfig.json: not read');
  const options: ts.CompilerOptions = {
    ...config.options,
    ...DTS_OPTIONS,
    rootDir: join(root, 'packages'),
    declarationDir: outDir,
  };
  const program = ts.createProgram(entries, options);
  const errors = ts
    .getPreEmitDiagnostics(program)
    .filter((diagnostic) => diagnostic.category === ts.DiagnosticCategory.Error);
  if (errors.length > 0) throw new Error(ts.formatDiagnostics(errors, formatHost(root)));
  const { emitSkipped, diagnostics } = program.emit(undefined, writeDeclaration, undefined, true);
  if (emitSkipped)
    throw new Error(`declarations not written:\n${ts.formatDiagnostics(diagnostics, formatHost(root))}`);
}

/**
 * Writes one declaration file and an empty `.ts` file beside it. The bundling step names each module
 * by its `.ts` path and reads its declarations from the `.d.ts` beside it (rollup-plugin-dts does so
 * for a module whose `.d.ts` exists), so a shared chunk keeps the name it has in a package's own build
 * (`transport-<hash>.d.ts`, not `transport.d-<hash>.d.ts`); the empty file gives the plugin nothing to
 * compile.
 */
function writeDeclaration(file: string, text: string): void {
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, text);
  writeFileSync(file.replace(/\.d\.ts$/, '.ts'), '');
}
