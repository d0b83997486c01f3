import { readFileSync } from 'node:fs';

/**
 * The whole machine's CPU time since boot, in ticks (the `cpu` line of Linux's /proc/stat, all CPUs):
 * `busy` (user, nice, system, irq, softirq; guest time is inside user), `idle` (idle and iowait), `steal`
 * (given by the hypervisor to other guests) and `all` (their sum). Two readings apart say how busy the
 * machine was between them, whatever the load average says. Zeros where /proc/stat cannot be read.
 */
export function machineTicks(): { busy: number; idle: number; steal: number; all: number } {
  let fields: number[] = [];
  try {
    fields = (readFileSync('/proc/stat', 'utf8').split('\n')[0] ?? '')
      .trim()
      .split(/\s+/)
      .slice(1)
      .map(Number);
  } catch {
    // Not Linux: the shares read as 0.
  }
  const [user = 0, nice = 0, system = 0, idleTicks = 0, iowait = 0, irq = 0, softirq = 0, steal = 0] = fields;
  const busy = user + nice + system + irq + softirq;
  const idle = idleTicks + iowait;
  return { busy, idle, steal, all: busy + idle + steal };
}
