import type { DnsResolver } from '../domains/dns-lookup.js';
import type { ParsedReceived } from './parse-received.js';
import type { InboundMail, SpamVerdict } from './receiving-types.js';

/** Options of receiving mail for the app (`MailroomOptions.receiving`). See docs/inbound-routes.md. */
export interface ReceivingOptions {
  /**
   * The in-process handler of routes whose destination is `handler`: called once the message is stored.
   * A throw is logged; the message stays stored (and listed by the API).
   */
  onInbound?: (mail: InboundMail) => void | Promise<void>;
  /** The app's spam verdict, asked before the message is stored; its answer is the message's `spam`. */
  spamVerdict?: (mail: ParsedReceived, raw: Uint8Array) => SpamVerdict | Promise<SpamVerdict>;
  /** DNS servers for SPF, DKIM and DMARC (`['127.0.0.1:5353']`). @default the system's */
  dnsServers?: string[];
  /** A resolver of your own for the checks (wins over `dnsServers`). */
  resolver?: DnsResolver;
  /** This server's name, written into the `Authentication-Results` header. @default 'mailroom' */
  authServId?: string;
}

/** The engine options receiving reads. */
export interface ReceivingEngineOptions {
  /** Receiving mail for the app through routes (issue 40). */
  receiving?: ReceivingOptions;
}
