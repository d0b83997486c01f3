import { isAbsolute, resolve } from 'node:path';
import {
  type BouncesOptions,
  createMailroom,
  type GuardedFetcherOptions,
  type Logger,
  type Mailroom,
  MailroomError,
  type NotificationOptions,
  type Store,
  type Transport,
  type UnsubscribeOptions,
  type WorkerOptions,
} from '@mailroom/core';
import { outboxTransport, smtpTransport } from '@mailroom/smtp';
import { sqlStore } from '@mailroom/sql';
import { UsageError } from './cli-errors.js';
import type { CliIo } from './io.js';

/** The database used when neither `--database` nor `MAILROOM_DATABASE_URL` names one. */
export const DEFAULT_DATABASE = 'mailroom.db';
/** The folder messages are written to when no SMTP server is configured. */
export const DEFAULT_OUTBOX = '.mailroom/outbox';

/** Database servers `sqlStore` speaks to; anything else with a scheme is a usage error. */
const SERVER_SCHEMES = /^(postgres|postgresql|mysql|mariadb):\/\//i;

/** Where the store lives, as given and as safe to print. */
export interface DatabaseTarget {
  /** The URL handed to `sqlStore` (a SQLite path made absolute). */
  url: string;
  /** The URL with any password masked. */
  label: string;
}

/** Where delivered messages go: an SMTP relay, or `.eml` files in a folder. */
export type DeliveryTarget =
  | { kind: 'smtp'; url: string; label: string }
  | { kind: 'outbox'; dir: string; label: string };

/** The `--database`, `--smtp` and `--outbox` flags, as given (absent ones undefined). */
export interface EngineFlags {
  /** `--database`. */
  database?: string | undefined;
  /** `--smtp`. */
  smtp?: string | undefined;
  /** `--outbox`. */
  outbox?: string | undefined;
}

/** An opened engine with what it runs on, for the banner and for shutdown. */
export interface OpenedEngine {
  /** The engine; `mailroom.close()` closes the store and the transport. */
  mailroom: Mailroom;
  /** The opened, migrated store. */
  store: Store;
  /** The database it was opened on. */
  database: DatabaseTarget;
  /** Undefined for admin commands, which never deliver. */
  delivery?: DeliveryTarget;
}

/** The database from `--database`, else `MAILROOM_DATABASE_URL`, else `./mailroom.db`. */
export function resolveDatabase(flag: string | undefined, io: CliIo, command: string): DatabaseTarget {
  const given = nonEmpty(flag) ?? nonEmpty(io.env.MAILROOM_DATABASE_URL) ?? DEFAULT_DATABASE;
  if (sqlitePath(given) === undefined && !SERVER_SCHEMES.test(given)) {
    throw new UsageError(
      `unsupported database URL '${redactUrl(given)}' (use a SQLite file path, postgres:// or mysql://)`,
      command,
    );
  }
  const url = sqlitePath(given) === undefined ? given : absoluteSqlite(given, io.cwd);
  return { url, label: redactUrl(url) };
}

/**
 * The delivery target: `--outbox` or `--smtp` (not both), else `MAILROOM_SMTP_URL`, else the default
 * outbox folder.
 */
export function resolveDelivery(flags: EngineFlags, io: CliIo, command: string): DeliveryTarget {
  const outbox = nonEmpty(flags.outbox);
  const smtp = nonEmpty(flags.smtp);
  if (outbox !== undefined && smtp !== undefined) {
    throw new UsageError('give --smtp or --outbox, not both', command);
  }
  const url = outbox === undefined ? (smtp ?? nonEmpty(io.env.MAILROOM_SMTP_URL)) : undefined;
  if (url !== undefined) {
    if (!/^smtps?:\/\//i.test(url)) {
      throw new UsageError(
        `the SMTP URL must start with smtp:// or smtps://, got '${redactUrl(url)}'`,
        command,
      );
    }
    return { kind: 'smtp', url, label: redactUrl(url) };
  }
  const dir = resolve(io.cwd, outbox ?? DEFAULT_OUTBOX);
  return { kind: 'outbox', dir, label: dir };
}

/**
 * Opens the store and runs its migrations, so that an unreachable or unusable database fails here, with
 * one clear error, rather than on the first request.
 */
export async function openStore(database: DatabaseTarget): Promise<Store> {
  let store: Store | undefined;
  try {
    const opened = sqlStore({ url: database.url });
    store = opened;
    await opened.init();
    return opened;
  } catch (error) {
    await store?.close().catch(() => {});
    throw new MailroomError('STORE_FAILED', `cannot open the database ${database.label}`, { cause: error });
  }
}

/**
 * Creates the transport and, for SMTP, checks that the server answers (`transport.verify`), so that a
 * wrong host or port fails at start rather than as retries of every delivery.
 */
export async function openTransport(delivery: DeliveryTarget): Promise<Transport> {
  if (delivery.kind === 'outbox') return outboxTransport({ dir: delivery.dir });
  let transport: Transport | undefined;
  try {
    const opened = smtpTransport(delivery.url);
    transport = opened;
    await opened.verify?.();
    return opened;
  } catch (error) {
    await transport?.close?.().catch(() => {});
    throw new MailroomError('TRANSPORT_TRANSIENT', `cannot reach the SMTP server ${delivery.label}`, {
      cause: error,
    });
  }
}

/**
 * Opens the store and, when `delivery` is given, the transport, and builds the engine on them. On failure
 * whatever was opened is closed again.
 */
export async function openEngine(options: {
  database: DatabaseTarget;
  delivery?: DeliveryTarget;
  logger?: Logger;
  worker?: WorkerOptions;
  /** One-click unsubscribe links in broadcasts (their base URL, and the secret if one is configured). */
  unsubscribe?: UnsubscribeOptions;
  /** VERP return paths and bounce handling. */
  bounces?: BouncesOptions;
  /** Provider notifications (SES, Mailgun). */
  notifications?: NotificationOptions;
  /** The guarded fetcher of CSV sources and attachment URLs (`--allow-host`). */
  fetch?: GuardedFetcherOptions;
}): Promise<OpenedEngine> {
  const store = await openStore(options.database);
  let transport: Transport;
  try {
    transport = options.delivery ? await openTransport(options.delivery) : adminTransport;
  } catch (error) {
    await store.close().catch(() => {});
    throw error;
  }
  const mailroom = createMailroom({
    store,
    transport,
    ...(options.logger ? { logger: options.logger } : {}),
    ...(options.worker ? { worker: options.worker } : {}),
    ...(options.unsubscribe ? { unsubscribe: options.unsubscribe } : {}),
    ...(options.bounces ? { bounces: options.bounces } : {}),
    ...(options.notifications ? { notifications: options.notifications } : {}),
    ...(options.fetch ? { fetch: options.fetch } : {}),
  });
  return {
    mailroom,
    store,
    database: options.database,
    ...(options.delivery ? { delivery: options.delivery } : {}),
  };
}

/** A URL with its password masked (`postgres://app:***@db/mail`); anything else unchanged. */
export function redactUrl(url: string): string {
  return url.replace(/^([a-z][a-z0-9+.-]*:\/\/[^:/@]*:)[^@/]*@/i, '$1***@');
}

/** Admin commands never deliver; the engine still wants a transport. */
const adminTransport: Transport = {
  name: 'none',
  capabilities: { dkim: false, maxConcurrency: 1 },
  async send() {
    throw new MailroomError('INTERNAL', 'admin commands do not deliver mail', { source: 'cli' });
  },
};

function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value.trim() === '' ? undefined : value.trim();
}

/** The file path of a SQLite database URL, or undefined for a server URL. */
function sqlitePath(url: string): string | undefined {
  if (url === ':memory:') return url;
  for (const prefix of ['sqlite://', 'sqlite:', 'file://', 'file:']) {
    if (url.startsWith(prefix)) return url.slice(prefix.length);
  }
  return /^[a-z][a-z0-9+.-]*:\/\//i.test(url) ? undefined : url;
}

/** A SQLite URL with its path made absolute against `cwd` (the CLI's working directory may be injected). */
function absoluteSqlite(url: string, cwd: string): string {
  const path = sqlitePath(url) ?? url;
  if (path === ':memory:' || path === '') return url;
  return isAbsolute(path) ? path : resolve(cwd, path);
}
