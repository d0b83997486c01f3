/**
 * Starts `bad-webhook-child.ts` (the misbehaving webhook endpoints) in a child process and talks to it:
 * its endpoints' URLs and hosts at once, their counters on request.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { BadEndpointOptions } from './bad-webhook-endpoints.js';

/** One endpoint's counters (see `BadEndpoint`). */
export interface BadEndpointStats {
  url: string;
  host: string;
  requests: number;
  open: number;
  maxOpen: number;
  connections: number;
}

/** The counters of every endpoint, the large body's bytes per request, and the process's CPU time. */
export interface BadEndpointsStats {
  hanging: BadEndpointStats;
  slow: BadEndpointStats;
  big: BadEndpointStats;
  redirect: BadEndpointStats;
  forbidden: BadEndpointStats;
  /** Per request to `big`, the body bytes written when the client closed (see `BigBodyEndpoint`). */
  written: number[];
  /** User and system CPU time of the process, microseconds. */
  cpuMicros: number;
}

/** The endpoints' process, seen from a test or a benchmark. */
export interface BadEndpointsProcess {
  /** The URLs and hosts (and the counters when it started). */
  readonly endpoints: BadEndpointsStats;
  stats(): Promise<BadEndpointsStats>;
  close(): Promise<void>;
}

const CHILD = fileURLToPath(new URL('./bad-webhook-child.ts', import.meta.url));

/** Starts the process and resolves once its endpoints listen. */
export async function startBadEndpointsProcess(
  options: BadEndpointOptions = {},
): Promise<BadEndpointsProcess> {
  const child: ChildProcess = spawn(process.execPath, ['--import', 'tsx', CHILD, JSON.stringify(options)], {
    stdio: ['ignore', 'pipe', 'inherit', 'ipc'],
  });
  const endpoints = await new Promise<BadEndpointsStats>((resolve, reject) => {
    let out = '';
    child.stdout?.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const line = /^endpoints (.*)$/m.exec(out);
      if (line?.[1]) resolve(JSON.parse(line[1]) as BadEndpointsStats);
    });
    child.once('exit', (code) => reject(new Error(`the bad endpoints exited with ${code}`)));
  });
  return {
    endpoints,
    stats: () =>
      new Promise((resolve) => {
        child.once('message', (reply) => resolve(reply as BadEndpointsStats));
        child.send('stats');
      }),
    async close() {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.disconnect();
      await exited;
    },
  };
}
