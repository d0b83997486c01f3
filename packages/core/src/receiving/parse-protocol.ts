import type { ParsedReceived } from './parse-received.js';
import type { ReceivingEnvelope } from './receiving-types.js';

/**
 * What the engine sends the parse thread: its settings once, then messages to read and judge, and the
 * answers of DNS lookups it asked for (when the app's own resolver answers them, on the main thread).
 */
export type ParseRequest =
  | {
      type: 'init';
      /** The `Authentication-Results` server name. */
      authServId: string;
      /**
       * Where the thread's DNS lookups go: its own resolver (on these servers, the system's when absent),
       * or `main` (the app's resolver, a function that cannot cross threads: asked through messages).
       */
      dns: { servers?: string[] } | 'main';
    }
  | { type: 'parse'; job: number; raw: Uint8Array; envelope: ReceivingEnvelope }
  | { type: 'dns'; id: number; records?: unknown; error?: ThreadFailure };

/** A failure as data (an Error does not cross threads with its fields); `code` is a node DNS code or a MailroomError code. */
export interface ThreadFailure {
  code?: string;
  message: string;
}

/** What the parse thread answers: loaded, a message read (or why not), or a DNS lookup it needs. */
export type ParseReply =
  | { type: 'ready' }
  | { type: 'parsed'; job: number; parsed: ParsedReceived }
  | { type: 'failed'; job: number; error: ThreadFailure }
  | { type: 'dns'; id: number; name: string; rrtype: string };
