import { connect } from 'node:net';

/** One SMTP connection, spoken by hand: a command (or a message's data) written, its reply read. */
export interface RawSmtpConnection {
  /** The next reply (its lines joined by `\n`), after writing `text` when given. Rejects once the connection failed. */
  say(text?: string | Buffer): Promise<string>;
  close(): void;
}

/**
 * Opens a connection to `port` on 127.0.0.1 from `localAddress`. No library: a load generator's own CPU must
 * stay small beside the server it measures (nodemailer's `sendMail` cost ~1.7 ms of CPU a 17.8 KB message,
 * about what the server spends receiving it).
 */
export function openRawSmtp(port: number, localAddress: string): RawSmtpConnection {
  const socket = connect({ host: '127.0.0.1', port, localAddress });
  socket.setEncoding('latin1');
  const replies: string[] = [];
  const waiters: Array<{ resolve(reply: string): void; reject(error: Error): void }> = [];
  let failed: Error | undefined;
  let pending = '';
  let lines: string[] = [];
  socket.on('data', (chunk: string) => {
    pending += chunk;
    for (let at = pending.indexOf('\r\n'); at !== -1; at = pending.indexOf('\r\n')) {
      const line = pending.slice(0, at);
      pending = pending.slice(at + 2);
      lines.push(line);
      // `250-...` continues a reply; `250 ...` (or a bare code) ends it.
      if (line[3] === '-') continue;
      const reply = lines.join('\n');
      lines = [];
      const waiter = waiters.shift();
      if (waiter) waiter.resolve(reply);
      else replies.push(reply);
    }
  });
  const fail = (error: Error) => {
    failed ??= error;
    for (const waiter of waiters.splice(0)) waiter.reject(failed);
  };
  socket.on('error', fail);
  socket.on('close', () => fail(new Error('connection closed')));
  return {
    say(text) {
      if (text !== undefined && !failed) socket.write(text);
      const ready = replies.shift();
      if (ready !== undefined) return Promise.resolve(ready);
      if (failed) return Promise.reject(failed);
      return new Promise((resolve, reject) => waiters.push({ resolve, reject }));
    },
    close() {
      socket.destroy();
    },
  };
}

/** A message's bytes as DATA sends them: lines starting with a dot doubled, CRLF at the end, then `.`. */
export function dataOf(raw: Buffer): Buffer {
  let text = raw.toString('latin1').replace(/(^|\r\n)\./g, '$1..');
  if (!text.endsWith('\r\n')) text += '\r\n';
  return Buffer.from(`${text}.\r\n`, 'latin1');
}
