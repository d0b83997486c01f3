/**
 * Records the host of every TCP connection this process opens (Node's `net.Socket#connect`, which HTTP
 * clients such as the AWS SDK's go through), so a test can check that nothing left the loopback: no AWS
 * endpoint, no instance-metadata lookup.
 */
import { Socket } from 'node:net';

/** A running record; `stop()` puts `connect` back. */
export interface ConnectionLog {
  /** Hosts connected to so far (`localhost` when a connection names none). */
  readonly hosts: string[];
  stop(): void;
}

export function logConnections(): ConnectionLog {
  const hosts: string[] = [];
  const original = Socket.prototype.connect;
  // biome-ignore lint/suspicious/noExplicitAny: connect's overloads take (options | port | path, ...).
  Socket.prototype.connect = function (this: Socket, ...args: any[]) {
    // net.createConnection passes its normalized arguments as one array: [options, callback].
    const [first, second] = Array.isArray(args[0]) ? (args[0] as unknown[]) : args;
    if (typeof first === 'object' && first !== null) {
      const options = first as { host?: string; path?: string };
      hosts.push(options.path ? 'unix' : (options.host ?? 'localhost'));
    } else if (typeof first === 'number' || (typeof first === 'string' && /^\d+$/.test(first))) {
      hosts.push(typeof second === 'string' ? second : 'localhost');
    } else {
      hosts.push('unix');
    }
    return original.apply(this, args as Parameters<typeof original>);
  } as typeof original;
  return {
    hosts,
    stop() {
      Socket.prototype.connect = original;
    },
  };
}

/** True for a loopback host (127.0.0.0/8, ::1, localhost) or a Unix socket. */
export function isLoopback(host: string): boolean {
  return host === 'localhost' || host === 'unix' || host === '::1' || /^127\.\d+\.\d+\.\d+$/.test(host);
}
