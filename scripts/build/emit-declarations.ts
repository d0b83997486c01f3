/**
 * `tsx scripts/build/emit-declarations.ts OUT_DIR ENTRY...`: {@link emitDeclarations} in a process of its
 * own, so that the packages' ES module builds run beside its type check (on the other core).
 */
import { fileURLToPath } from 'node:url';
import { emitDeclarations } from './declarations.js';

const [outDir, ...entries] = process.argv.slice(2);
if (!outDir || entries.length === 0) throw new Error('usage: emit-declarations.ts OUT_DIR ENTRY...');
emitDeclarations(fileURLToPath(new URL('../..', import.meta.url)), entries, outDir);
