/**
 * The outbox transport: every message becomes an `.eml` file in a folder. The embedded default of
 * `mailroom serve` when no relay is configured; any mail client opens the files.
 */
import { randomBytes } from 'node:crypto';
import { constants } from 'node:fs';
import { access, mkdir, open, rename, rm } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import {
  DEFAULT_TEXT_ENCODING,
  MailroomError,
  type RawOutgoingMessage,
  type SendReceipt,
  type TextEncoding,
  type Transport,
} from '@mailroom/core';

const TRANSPORT_NAME = 'outbox';

/** The transport {@link outboxTransport} returns: `verify` and `close` are always there. */
export type OutboxTransport = Transport &
  Required<Pick<Transport, 'verify' | 'close'>> & {
    /**
     * The same function as `send`.
     * @deprecated `send` takes the bytes now (a transport's one job); removed in 1.0.
     */
    sendRaw: Transport['send'];
  };

/** Options of {@link outboxTransport}. */
export interface OutboxTransportOptions {
  /** Folder the `.eml` files go to; created (with its parents) when missing. */
  dir: string;
  /**
   * Transfer encoding of text parts, as for the SMTP transport, so the files hold the bytes a relay
   * would get.
   * @default 'base64'
   */
  textEncoding?: TextEncoding;
  /**
   * Flush each file to disk before `send` resolves, so a message reported sent survives a crash.
   * @default true
   */
  fsync?: boolean;
  /**
   * Sends the worker may run at once.
   * @default 8
   */
  maxConcurrency?: number;
}

/**
 * Creates a transport that writes each message, the full MIME the core composed (DKIM-signed when the
 * sender has a key, in `textEncoding`, which it declares in its capabilities), to
 * `<dir>/<UTC timestamp>-<Message-ID>-<random>.eml`, headed by `Return-Path: <envelope sender>` as a
 * final delivery agent writes it. Files appear atomically: written under
 * a dot-prefixed temporary name, then renamed. The receipt's response is `250 written <path>`.
 * File-system failures reject with `TRANSPORT_TRANSIENT`.
 *
 * @example
 * const transport = outboxTransport({ dir: '.mailroom/outbox' });
 */
export function outboxTransport(options: OutboxTransportOptions): OutboxTransport {
  const dir = resolve(options.dir);
  const textEncoding = options.textEncoding ?? DEFAULT_TEXT_ENCODING;
  const fsync = options.fsync ?? true;
  let ready: Promise<unknown> | undefined;
  const ensureDir = () => {
    ready ??= mkdir(dir, { recursive: true }).catch((error: unknown) => {
      ready = undefined;
      throw error;
    });
    return ready;
  };

  const outbox: OutboxTransport = {
    name: TRANSPORT_NAME,
    capabilities: { dkim: true, maxConcurrency: options.maxConcurrency ?? 8, textEncoding },

    async send(message: RawOutgoingMessage): Promise<SendReceipt> {
      const { raw } = message;
      const unique = randomBytes(4).toString('hex');
      const path = join(dir, `${timestamp(new Date())}-${fileSafe(message.messageId)}-${unique}.eml`);
      const temporary = join(dir, `.${unique}-${process.pid}.eml.tmp`);
      try {
        await ensureDir();
        const file = await open(temporary, 'wx');
        try {
          // What a final delivery agent adds: the file shows where a bounce of it would have gone.
          await file.writev([returnPath(message.envelope.from), raw]);
          if (fsync) await file.datasync();
        } finally {
          await file.close();
        }
        await rename(temporary, path);
      } catch (error) {
        await rm(temporary, { force: true }).catch(() => {});
        throw fileError(`could not write ${path}`, error);
      }
      return {
        messageId: message.messageId,
        accepted: [...message.envelope.to],
        rejected: [],
        response: `250 written ${path}`,
      };
    },

    sendRaw(message) {
      return outbox.send(message);
    },

    async verify(): Promise<void> {
      try {
        await ensureDir();
        await access(dir, constants.W_OK);
      } catch (error) {
        throw fileError(`folder ${dir} is not writable`, error);
      }
    },

    async close(): Promise<void> {},
  };
  return outbox;
}

function fileError(message: string, cause: unknown): MailroomError {
  const code = (cause as { code?: unknown } | null)?.code;
  return new MailroomError(
    'TRANSPORT_TRANSIENT',
    typeof code === 'string' ? `${message} (${code})` : message,
    {
      cause,
      source: TRANSPORT_NAME,
    },
  );
}

/** The `Return-Path` line of an envelope sender (an address never holds CR or LF; dropped if it did). */
function returnPath(from: string): Buffer {
  return Buffer.from(`Return-Path: <${from.replace(/[\r\n<>]/g, '')}>\r\n`, 'utf8');
}

/** `20260322T101500123Z`: sorts by time, no characters that some file systems refuse. */
function timestamp(date: Date): string {
  return date.toISOString().replace(/[-:.]/g, '');
}

/** The Message-ID without brackets, reduced to characters safe in any file name, at most 100 of them. */
function fileSafe(messageId: string): string {
  const safe = messageId
    .replace(/^<|>$/g, '')
    .replace(/[^A-Za-z0-9._@+=-]+/g, '_')
    .replace(/^\.+/, '')
    .slice(0, 100);
  return safe === '' ? 'message' : safe;
}
