/**
 * An SMTP server on 127.0.0.1 that answers like a throttling provider: above `limit` recipients of one
 * destination in any sliding `windowMs`, RCPT TO gets `421 4.7.28` (Gmail's "unusual rate"), as Gmail,
 * Yahoo and Microsoft do. Every RCPT is recorded with its time (accepted or not), so a test can check the
 * windows as the receiver saw them; the messages accepted are kept by recipient.
 */
import type { AddressInfo } from 'node:net';
import { SMTPServer, type SMTPServerAddress } from 'smtp-server';

/** One RCPT TO the sink answered. */
export interface RcptArrival {
  /** `performance.now()` at the sink when the command arrived. */
  at: number;
  address: string;
  destination: string;
  accepted: boolean;
}

/** Options of {@link startThrottlingSink}. */
export interface ThrottlingSinkOptions {
  /** The destination of a recipient (`gmail.com` -> `google`). */
  destinationOf: (address: string) => string;
  /** Destinations throttled, with their limits; others are never throttled. */
  limits: Record<string, { limit: number; windowMs: number }>;
}

/** A running throttling sink. */
export interface ThrottlingSink {
  readonly port: number;
  /** Every RCPT TO, in arrival order. */
  readonly arrivals: RcptArrival[];
  /** Recipients whose message was accepted (one entry per message). */
  readonly delivered: string[];
  /** The most RCPTs (accepted or refused) of `destination` in any `windowMs` as the sink saw them. */
  maxInWindow(destination: string, windowMs: number): number;
  close(): Promise<void>;
}

/** Starts a throttling sink on a random port. */
export async function startThrottlingSink(options: ThrottlingSinkOptions): Promise<ThrottlingSink> {
  const arrivals: RcptArrival[] = [];
  const delivered: string[] = [];
  const server = new SMTPServer({
    disabledCommands: ['STARTTLS', 'AUTH'],
    authOptional: true,
    logger: false,
    onRcptTo(address: SMTPServerAddress, _session, callback) {
      const at = performance.now();
      const destination = options.destinationOf(address.address);
      const rule = options.limits[destination];
      const recent = rule
        ? arrivals.filter((a) => a.destination === destination && a.accepted && a.at > at - rule.windowMs)
            .length
        : 0;
      const accepted = !rule || recent < rule.limit;
      arrivals.push({ at, address: address.address, destination, accepted });
      if (accepted) callback();
      else
        callback(
          Object.assign(
            new Error('4.7.28 Our system has detected an unusual rate of unsolicited mail. Try again later.'),
            { responseCode: 421 },
          ),
        );
    },
    onData(stream, session, callback) {
      stream.on('data', () => {});
      stream.on('error', callback);
      stream.on('end', () => {
        for (const rcpt of session.envelope.rcptTo) delivered.push(rcpt.address);
        callback(null, 'Ok: queued');
      });
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
  return {
    port: (server.server.address() as AddressInfo).port,
    arrivals,
    delivered,
    maxInWindow(destination, windowMs) {
      const times = arrivals.filter((a) => a.destination === destination).map((a) => a.at);
      let most = 0;
      for (let i = 0, j = 0; i < times.length; i++) {
        while ((times[i] as number) - (times[j] as number) >= windowMs) j++;
        most = Math.max(most, i - j + 1);
      }
      return most;
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
