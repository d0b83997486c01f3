/**
 * With `MAILROOM_TEST_CPU_LOG=<file>`, each test file appends one line to that file: its path, its worker
 * process's own CPU, the CPU of the child processes it started and waited for (servers, CLIs, installs),
 * and its wall time, in ms, tab-separated. The suite is CPU-bound on two cores, so this, not the wall time
 * (which grows with whatever runs beside the file), says what a file costs. Database servers' CPU is not
 * in it. Without the variable this file does nothing.
 */
import { appendFileSync, readFileSync } from 'node:fs';
import { afterAll, beforeAll, expect } from 'vitest';

const LOG = process.env.MAILROOM_TEST_CPU_LOG;
/** Clock ticks a second: 100 on Linux (`getconf CLK_TCK`). */
const TICK_MS = 10;

/** utime, stime, cutime, cstime of this process, in ms (fields 14-17 of /proc/self/stat). */
function ticks(): { self: number; children: number } {
  const stat = readFileSync('/proc/self/stat', 'utf8');
  // The command name (field 2) may hold spaces: count the fields after its closing parenthesis.
  const [utime, stime, cutime, cstime] = stat
    .slice(stat.lastIndexOf(')') + 2)
    .split(' ')
    .slice(11, 15)
    .map(Number) as [number, number, number, number];
  return { self: (utime + stime) * TICK_MS, children: (cutime + cstime) * TICK_MS };
}

if (LOG) {
  // Set up before each file's own imports are loaded (a setup file runs first), so loading them counts.
  const start = { ...ticks(), at: performance.now() };
  let path = '?';
  beforeAll(() => {
    path = expect.getState().testPath ?? '?';
  });
  afterAll(() => {
    const end = ticks();
    const wall = Math.round(performance.now() - start.at);
    appendFileSync(
      LOG,
      `${path.slice(process.cwd().length + 1)}\t${end.self - start.self}\t${end.children - start.children}\t${wall}\n`,
    );
  });
}
