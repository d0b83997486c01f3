import { connect, type Socket } from 'node:net';

/** A line-by-line SMTP client for tests that need exact control (no SIZE, held connections). */
export interface RawSmtpClient {
  /** The greeting (or the refusal) the server sent on connect. */
  readonly greeting: string;
  /** Sends one command (or raw DATA bytes) and resolves with the server's whole reply. */
  command(line: string | Buffer): Promise<string>;
  close(): void;
}

/**
 * Opens a connection to 127.0.0.1:`port` and waits for the greeting. `localAddress` (another loopback
 * address, 127.0.0.2) makes the connection come from another client address.
 */
export async function rawSmtpClient(
  port: number,
  options: { localAddress?: string } = {},
): Promise<RawSmtpClient> {
  const socket: Socket = connect({ port, host: '127.0.0.1', ...options });
  let buffer = '';
  let waiter: ((reply: string) => void) | undefined;
  const complete = () => {
    // A reply ends with a line "NNN text" (a space after the code, not a dash).
    const m = /(^|\r\n)\d{3} [^\r\n]*\r\n$/.exec(buffer);
    if (m && waiter) {
      const reply = buffer;
      buffer = '';
      const wake = waiter;
      waiter = undefined;
      wake(reply);
    }
  };
  socket.on('data', (chunk) => {
    buffer += chunk.toString('latin1');
    complete();
  });
  socket.on('error', () => {});
  const next = () =>
    new Promise<string>((resolve) => {
      waiter = resolve;
      complete();
    });
  const greeting = await next();
  return {
    greeting,
    command(line) {
      const reply = next();
      socket.write(typeof line === 'string' ? `${line}\r\n` : line);
      return reply;
    },
    close: () => socket.destroy(),
  };
}
