/**
 * A relay on 127.0.0.1 (smtp-server, random port) that accepts the first `acceptFirst` recipients and
 * then refuses every one with `550 5.7.1 ... policy block`, as a provider does once it has had enough of a
 * sender, until `acceptAll()` lifts the block. It counts every recipient tried (RCPT TO), keeps no message bytes: for the reputation guard's
 * tests of how many are tried before the pause.
 */
import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';

/** A running policy-block relay. */
export interface PolicyBlockRelay {
  readonly host: string;
  readonly port: number;
  /** Recipients tried so far (accepted and refused). */
  readonly tried: number;
  /** Recipients refused so far. */
  readonly refused: number;
  /** Recipients accepted so far. */
  readonly accepted: number;
  /** From now on accept every recipient (the block was lifted). */
  acceptAll(): void;
  close(): Promise<void>;
}

/** Starts the relay: accepts `acceptFirst` recipients, refuses every later one with a 5.7.1 policy block. */
export async function startPolicyBlockRelay(acceptFirst: number): Promise<PolicyBlockRelay> {
  let tried = 0;
  let refused = 0;
  let lifted = false;
  const server = new SMTPServer({
    disabledCommands: ['STARTTLS', 'AUTH'],
    authOptional: true,
    logger: false,
    closeTimeout: 100,
    onRcptTo(_address, _session, callback) {
      tried++;
      if (lifted || tried <= acceptFirst) return callback();
      refused++;
      callback(
        Object.assign(new Error('5.7.1 Message rejected: sender blocked by policy (policy block)'), {
          responseCode: 550,
        }),
      );
    },
    onData(stream, _session, callback) {
      stream.on('data', () => {});
      stream.on('error', callback);
      stream.on('end', () => callback(null, 'Ok: queued'));
    },
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  server.on('error', () => {});
  const port = (server.server.address() as AddressInfo).port;
  return {
    host: '127.0.0.1',
    port,
    get tried() {
      return tried;
    },
    get refused() {
      return refused;
    },
    get accepted() {
      return tried - refused;
    },
    acceptAll() {
      lifted = true;
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
