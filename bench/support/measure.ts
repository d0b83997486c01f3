import { cpus, totalmem } from 'node:os';

/** Median of numbers. */
export function median(values: number[]): number {
  const s = [...values].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 ? (s[mid] as number) : ((s[mid - 1] as number) + (s[mid] as number)) / 2;
}

/** A one-line description of this machine for BENCHMARKS.md. */
export function machine(): string {
  const cpu = cpus();
  return `${cpu.length} x ${cpu[0]?.model ?? 'cpu'}, ${Math.round(totalmem() / 2 ** 30)} GiB, Node ${process.version}`;
}

/** Tracks peak RSS by sampling (RSS has no high-water mark in Node 20 other than resourceUsage's maxRSS). */
export function peakRssMiB(): number {
  return Math.round(process.resourceUsage().maxRSS / 1024);
}

/** Run `fn` `runs` times and return every result. */
export async function repeat<T>(runs: number, fn: (run: number) => Promise<T>): Promise<T[]> {
  const out: T[] = [];
  for (let i = 0; i < runs; i++) out.push(await fn(i));
  return out;
}

/** Print the result line a benchmark reports (the harness and BENCHMARKS.md read it). */
export function report(name: string, figures: Record<string, unknown>): void {
  console.log(JSON.stringify({ bench: name, machine: machine(), ...figures }));
}
