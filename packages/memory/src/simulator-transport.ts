import {
  isMailroomError,
  MailroomError,
  type MailroomInbound,
  type OutgoingMessage,
  type RawOutgoingMessage,
  type SendReceipt,
} from '@mailroom/core';
import { fieldsOf, type MemoryTransport, memoryTransport } from './memory-transport.js';
import { buildDeliveryStatusNotification, buildFeedbackReport } from './simulator-reports.js';

const DRIVER_NAME = 'simulator';

/** What a receiving server says when the sender's domain fails DMARC (as Gmail words it). */
const DMARC_TEXT = "Unauthenticated email from the sender's domain is not accepted due to its DMARC policy";

/** A report the engine defers (it outran the record of the send) is handed again this often... */
const DEFERRED_WAIT_MS = 20;
/** ... this many times at most (5 s). */
const DEFERRED_TRIES = 250;

/** The domain whose addresses act out outcomes. */
export const SIMULATOR_DOMAIN = 'simulator.mailroom.test';

/** The outcomes the simulator acts out, by the local part of the address (before any `+tag`). */
export type SimulatedOutcome =
  | 'bounce'
  | 'soft'
  | 'async-bounce'
  | 'dmarc'
  | 'async-dmarc'
  | 'complaint'
  | 'slow';

/** The SMTP envelope a report arrives with, as an inbound listener would see it. */
export interface SimulatorEnvelope {
  /** `RCPT TO`: the original message's envelope sender (its return path). */
  envelopeTo: string[];
  /** `MAIL FROM`: empty for a DSN (RFC 5321: a bounce has the null sender), the loop's address for a complaint. */
  envelopeFrom: string;
}

/**
 * Receives a message mailed back to the sender (a DSN or an ARF report): its MIME bytes and its envelope,
 * the two things an inbound SMTP listener hands on. What it returns is kept when it is an inbound receipt
 * (`mailroom.inbound.receive`'s): an `ignored` one makes the report `ignored`, with the reason.
 */
export type InboundHook = (raw: Uint8Array, envelope: SimulatorEnvelope) => unknown;

/** Options of {@link simulatorTransport}. */
export interface SimulatorTransportOptions {
  /**
   * Where the asynchronous outcomes go: the bytes of a DSN (`async-bounce@`, `async-dmarc@`) or an ARF complaint
   * (`complaint@`) and their envelope, addressed to the message's envelope sender (`envelopeFrom` when the
   * engine sets one, else the From address), as an MTA or a feedback loop would mail them back. Wire it
   * to the engine's inbound path (the one the inbound SMTP listener feeds). It can also be set later on
   * the transport (`transport.onInbound = ...`).
   */
  onInbound?: InboundHook;
  /**
   * Milliseconds between the acceptance of a message and its DSN or complaint.
   * @default 50
   */
  reportDelayMs?: number;
  /**
   * How long `slow@` takes.
   * @default 2000
   */
  slowMs?: number;
  /**
   * The `maxConcurrency` capability the transport declares.
   * @default 64
   */
  maxConcurrency?: number;
}

/** A report the simulator generated. */
export interface SimulatorReport {
  /** `dsn` for a bounce, `arf` for a complaint. */
  kind: 'dsn' | 'arf';
  /** The message it is about. */
  messageId: string;
  /** The recipient it is about. */
  address: string;
  /** The report's bytes (multipart/report MIME). */
  raw: Uint8Array;
  /** Its envelope. */
  envelope: SimulatorEnvelope;
  /**
   * Whether `onInbound` took it: `pending` until it is due, `skipped` without a hook, `ignored` when the
   * hook answered with an ignored receipt (see `reason`).
   */
  state: 'pending' | 'delivered' | 'ignored' | 'failed' | 'skipped';
  /** What `onInbound` threw, when it failed. */
  error?: unknown;
  /** Why the engine ignored it, when it did (`the engine has no bounce domain ...`). */
  reason?: string;
}

/** The transport {@link simulatorTransport} returns. */
export interface SimulatorTransport extends MemoryTransport {
  /** Where DSNs and complaints go (see {@link SimulatorTransportOptions.onInbound}); assignable. */
  onInbound: InboundHook | undefined;
  /**
   * Sends the DSNs and complaints to `mailroom.inbound.receive`, the path the inbound SMTP listener feeds,
   * and sends a report again (every 20 ms, for up to 5 s) while the engine defers it because it outran
   * the record of the send, as an MTA would. The engine needs a bounce domain (any: nothing is mailed
   * there), since reports are matched by the VERP return path it puts on each message.
   * @throws MailroomError `VALIDATION_FAILED` when the engine has no bounce domain.
   * @example
   * const mailroom = createMailroom({ store, transport, bounces: { domain: 'bounces.example.test' } });
   * transport.connect(mailroom);
   */
  connect(mailroom: { readonly inbound: Pick<MailroomInbound, 'enabled' | 'receive'> }): void;
  /** Every report generated so far, in order. */
  readonly reports: SimulatorReport[];
  /** Resolves once every report generated so far was handed to `onInbound` (or skipped). */
  settled(): Promise<void>;
  /** Waits for the reports under way, as {@link SimulatorTransport.settled}. */
  close(): Promise<void>;
}

/**
 * A transport for users' tests: it keeps what it accepts in an outbox, as `memoryTransport` does, and
 * addresses at `simulator.mailroom.test` act out what happens to mail in the world:
 *
 * | address | outcome |
 * |---|---|
 * | `bounce@` | refused at once: `550 5.1.1` to `RCPT TO` (a hard bounce: the delivery ends `bounced`, the address is suppressed) |
 * | `soft@` | `451 4.3.0` twice for a message, then accepted (the worker's retries) |
 * | `dmarc@` | refused at once: `550 5.7.26` after `DATA`, a DMARC failure (sender-side: the delivery fails, the address is not suppressed) |
 * | `async-bounce@` | accepted, then a DSN (RFC 3464, `5.1.1`) is mailed back to `onInbound` |
 * | `async-dmarc@` | accepted, then a DSN (`5.7.26`, a DMARC rejection: sender-side) is mailed back to `onInbound` |
 * | `complaint@` | accepted, then an ARF complaint (RFC 5965) is mailed back to `onInbound` |
 * | `slow@` | accepted after 2 s |
 *
 * A `+tag` is ignored (`bounce+42@simulator.mailroom.test` bounces), so a test can use many addresses.
 * Every other address is accepted. The reports go through `onInbound` as raw MIME, the same path as the
 * DSNs and complaints that real mail servers send back, so a test sees the events production would.
 *
 * @example
 * ```ts
 * const transport = simulatorTransport();
 * const mailroom = createMailroom({ store: memoryStore(), transport, bounces: { domain: 'bounces.example.test' } });
 * transport.connect(mailroom); // reports go to the engine's inbound path
 * ```
 */
export function simulatorTransport(options: SimulatorTransportOptions = {}): SimulatorTransport {
  const inner = memoryTransport({ maxConcurrency: options.maxConcurrency ?? 64 });
  const reportDelayMs = options.reportDelayMs ?? 50;
  const slowMs = options.slowMs ?? 2000;
  const softFailures = new Map<string, number>();
  const reports: SimulatorReport[] = [];
  const inFlight = new Set<Promise<void>>();

  function schedule(report: SimulatorReport): void {
    reports.push(report);
    const handing = new Promise<void>((resolve) => setTimeout(resolve, reportDelayMs)).then(async () => {
      const hook = transport.onInbound;
      if (!hook) {
        report.state = 'skipped';
        return;
      }
      try {
        const answer = await hook(report.raw, report.envelope);
        const ignored = ignoredReason(answer);
        if (ignored === undefined) report.state = 'delivered';
        else {
          report.state = 'ignored';
          report.reason = ignored;
        }
      } catch (error) {
        report.state = 'failed';
        report.error = error;
      }
    });
    inFlight.add(handing);
    void handing.finally(() => inFlight.delete(handing));
  }

  async function send(outgoing: RawOutgoingMessage): Promise<SendReceipt> {
    const message = fieldsOf(outgoing);
    const outcome = outcomeOf(message.to.address);
    if (outcome === 'bounce')
      throw refusal(message, 550, '5.1.1', 'Recipient address rejected: User unknown');
    if (outcome === 'dmarc') throw refusal(message, 550, '5.7.26', DMARC_TEXT, 'DATA');
    if (outcome === 'soft') {
      const failures = softFailures.get(message.messageId) ?? 0;
      if (failures < 2) {
        softFailures.set(message.messageId, failures + 1);
        throw refusal(message, 451, '4.3.0', 'Temporary failure, try again later');
      }
      softFailures.delete(message.messageId);
    }
    if (outcome === 'slow') await new Promise((resolve) => setTimeout(resolve, slowMs));
    const arrivedAt = new Date();
    const receipt = await inner.send(outgoing);
    const returnPath = returnPathOf(message);
    const about = { message, returnPath, arrivedAt, host: SIMULATOR_DOMAIN };
    const report = { messageId: message.messageId, address: message.to.address, state: 'pending' as const };
    if (outcome === 'async-bounce') {
      const raw = buildDeliveryStatusNotification(about, {
        status: '5.1.1',
        diagnostic: `550 5.1.1 <${message.to.address}>: Recipient address rejected: User unknown (simulated)`,
      });
      schedule({ ...report, kind: 'dsn', raw, envelope: { envelopeTo: [returnPath], envelopeFrom: '' } });
    } else if (outcome === 'async-dmarc') {
      const raw = buildDeliveryStatusNotification(about, {
        status: '5.7.26',
        diagnostic: `550 5.7.26 ${DMARC_TEXT} (simulated)`,
      });
      schedule({ ...report, kind: 'dsn', raw, envelope: { envelopeTo: [returnPath], envelopeFrom: '' } });
    } else if (outcome === 'complaint') {
      const raw = buildFeedbackReport(about);
      const envelopeFrom = `fbl@${SIMULATOR_DOMAIN}`;
      schedule({ ...report, kind: 'arf', raw, envelope: { envelopeTo: [returnPath], envelopeFrom } });
    }
    return { ...receipt, response: `250 2.0.0 Ok (${DRIVER_NAME})` };
  }

  const transport: SimulatorTransport = {
    ...inner,
    name: DRIVER_NAME,
    onInbound: options.onInbound,
    reports,
    send,
    async settled() {
      while (inFlight.size > 0) await Promise.all([...inFlight]);
    },
    connect(mailroom) {
      if (!mailroom.inbound.enabled) {
        throw new MailroomError(
          'VALIDATION_FAILED',
          "simulatorTransport.connect: the engine has no bounce domain, so it would ignore the simulator's " +
            "DSNs and complaints: create it with createMailroom({ bounces: { domain: 'bounces.example.test' } }) " +
            '(any domain: nothing is mailed there)',
          { source: DRIVER_NAME },
        );
      }
      transport.onInbound = async (raw, envelope) => {
        for (let attempt = 1; ; attempt++) {
          try {
            return await mailroom.inbound.receive(raw, envelope);
          } catch (error) {
            if (!isMailroomError(error, 'INBOUND_DEFERRED') || attempt >= DEFERRED_TRIES) throw error;
            await new Promise((resolve) => setTimeout(resolve, DEFERRED_WAIT_MS));
          }
        }
      };
    },
    async close() {
      await transport.settled();
    },
  };
  return transport;
}

/** The reason of an ignored inbound receipt (`{ outcome: 'ignored', reason }`), if `answer` is one. */
function ignoredReason(answer: unknown): string | undefined {
  if (typeof answer !== 'object' || answer === null) return undefined;
  const { outcome, reason } = answer as { outcome?: unknown; reason?: unknown };
  return outcome === 'ignored' ? String(reason ?? 'ignored') : undefined;
}

/**
 * Where reports about a message go: its envelope sender. Engines with a bounce domain set
 * `envelopeFrom` (a VERP address) on the messages they send; without one it is the From address.
 */
function returnPathOf(message: OutgoingMessage): string {
  return message.envelopeFrom || message.from.address;
}

/** The outcome an address asks for, if it is at the simulator's domain. */
function outcomeOf(address: string): SimulatedOutcome | undefined {
  const at = address.lastIndexOf('@');
  if (at < 0 || address.slice(at + 1).toLowerCase() !== SIMULATOR_DOMAIN) return undefined;
  const local = address.slice(0, at).split('+')[0]?.toLowerCase();
  const outcomes: readonly SimulatedOutcome[] = [
    'bounce',
    'soft',
    'async-bounce',
    'dmarc',
    'async-dmarc',
    'complaint',
    'slow',
  ];
  return outcomes.find((o) => o === local);
}

function refusal(
  message: OutgoingMessage,
  code: number,
  status: string,
  text: string,
  command = 'RCPT TO',
): MailroomError {
  const response = `${code} ${status} <${message.to.address}>: ${text} (simulated)`;
  return new MailroomError(code >= 500 ? 'TRANSPORT_PERMANENT' : 'TRANSPORT_TRANSIENT', response, {
    responseCode: code,
    command,
    response,
    source: DRIVER_NAME,
  });
}
