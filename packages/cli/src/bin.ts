#!/usr/bin/env node
import { main } from './main.js';
import { tuneHeap } from './server/heap-tuning.js';

// The process is ours: the heap settings of a long-running server (see heap-tuning.ts), not set by
// `main`, which tests and embedders call in processes of their own.
tuneHeap();
const code = await main(process.argv.slice(2));
// exitCode, not process.exit(): a piped stdout is flushed before the process ends. The unref'd timer only
// fires if some handle outlived a graceful shutdown, which must not keep a stopped server alive.
process.exitCode = code;
setTimeout(() => process.exit(code), 5_000).unref();
