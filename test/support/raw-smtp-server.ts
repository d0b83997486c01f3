/**
 * A scripted SMTP server on raw TCP (127.0.0.1, random port), for the replies a real server can't be
 * told to give: 421 at the greeting, 452 on RCPT, silence, a connection dropped after the final dot
 * and before the 250. Every step answers with a happy default unless the script says otherwise.
 *
 * ```ts
 * const server = await startRawSmtpServer({ RCPT: '550 5.1.1 No such user' });
 * const server = await startRawSmtpServer({ '.': drop() });       // dropped after the final dot
 * const server = await startRawSmtpServer({ GREETING: silent() }); // never says hello
 * ```
 */

import { type AddressInfo, createServer, type Socket } from 'node:net';

/**
 * What the server does at a step: a reply (a string, several lines joined with CRLF), stay
 * silent, drop the connection, or reply and then drop it.
 */
export type RawAction = string | { silent: true } | { drop: true; reply?: string };

/**
 * The steps of a session: `GREETING` (on connect), any command verb (`EHLO`, `HELO`, `AUTH`, `MAIL`,
 * `RCPT`, `DATA`, `RSET`, `NOOP`, `QUIT`, ...) and `.` (the end of the message data).
 */
export type RawSmtpScript = Partial<
  Record<string, RawAction | ((line: string, session: RawSession) => RawAction)>
>;

/** State of one connection, given to scripted functions. */
export interface RawSession {
  /** 1 for the first connection. */
  readonly connection: number;
  /** Commands received on this connection, as sent. */
  readonly commands: string[];
}

/** A running raw server. */
export interface RawSmtpServer {
  /** Always `127.0.0.1`. */
  readonly host: string;
  /** The random port it listens on. */
  readonly port: number;
  /** Connections accepted so far. */
  readonly connections: number;
  /** DATA commands received so far, on all connections. */
  readonly dataAttempts: number;
  /** Message data (as sent, still dot-stuffed) of every final dot that arrived, on all connections. */
  readonly messages: Buffer[];
  /** Every command line received, on all connections. */
  readonly commands: string[];
  /** Stops listening and destroys open connections. */
  close(): Promise<void>;
}

/** Stay silent at this step (to test timeouts). */
export function silent(): RawAction {
  return { silent: true };
}

/** Drop the connection at this step, optionally after a reply. */
export function drop(reply?: string): RawAction {
  return reply === undefined ? { drop: true } : { drop: true, reply };
}

const DEFAULTS: Record<string, RawAction> = {
  GREETING: '220 raw.test ESMTP scripted',
  EHLO: '250-raw.test\r\n250-8BITMIME\r\n250 AUTH PLAIN LOGIN',
  HELO: '250 raw.test',
  AUTH: '235 2.7.0 Authentication successful',
  MAIL: '250 2.1.0 Ok',
  RCPT: '250 2.1.5 Ok',
  DATA: '354 End data with <CR><LF>.<CR><LF>',
  '.': '250 2.0.0 Ok: queued as RAW',
  RSET: '250 2.0.0 Ok',
  NOOP: '250 2.0.0 Ok',
  QUIT: '221 2.0.0 Bye',
};

/** Starts a scripted server on 127.0.0.1 on a random free port. */
export async function startRawSmtpServer(script: RawSmtpScript = {}): Promise<RawSmtpServer> {
  const sockets = new Set<Socket>();
  const messages: Buffer[] = [];
  const allCommands: string[] = [];
  let connections = 0;
  let dataAttempts = 0;

  const server = createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => {});
    const session: RawSession = { connection: ++connections, commands: [] };
    let buffer = Buffer.alloc(0);
    let inData = false;

    // Runs the scripted action of a step; returns the reply sent, or null once the connection is gone.
    const act = (step: string, line: string): string | null => {
      const scripted = script[step];
      const action =
        typeof scripted === 'function' ? scripted(line, session) : (scripted ?? defaultAction(step));
      if (typeof action === 'string') {
        socket.write(`${action}\r\n`);
        if (step !== 'QUIT') return action;
        socket.end();
        return null;
      }
      if ('silent' in action) return '';
      if (action.reply !== undefined) socket.end(`${action.reply}\r\n`);
      else socket.destroy();
      return null;
    };

    socket.on('data', (chunk: Buffer) => {
      buffer = Buffer.concat([buffer, chunk]);
      for (;;) {
        if (inData) {
          // The terminating dot line; an empty message is just ".\r\n".
          const end = buffer.subarray(0, 3).toString() === '.\r\n' ? -2 : buffer.indexOf('\r\n.\r\n');
          if (end === -1) return;
          messages.push(buffer.subarray(0, Math.max(end + 2, 0)));
          buffer = buffer.subarray(end + 5);
          inData = false;
          if (act('.', '.') === null) return;
          continue;
        }
        const eol = buffer.indexOf('\r\n');
        if (eol < 0) return;
        const line = buffer.subarray(0, eol).toString('utf8');
        buffer = buffer.subarray(eol + 2);
        session.commands.push(line);
        allCommands.push(line);
        const verb = (line.split(' ', 1)[0] ?? '').toUpperCase();
        if (verb === 'DATA') dataAttempts++;
        const reply = act(verb, line);
        if (reply === null) return;
        if (verb === 'DATA' && reply.startsWith('354')) inData = true;
      }
    });

    act('GREETING', '');
  });

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });

  return {
    host: '127.0.0.1',
    port: (server.address() as AddressInfo).port,
    get connections() {
      return connections;
    },
    get dataAttempts() {
      return dataAttempts;
    },
    messages,
    commands: allCommands,
    close() {
      for (const socket of sockets) socket.destroy();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

function defaultAction(step: string): RawAction {
  return DEFAULTS[step] ?? '502 5.5.2 Command not implemented';
}
