import { isAbsolute, resolve } from 'node:path';
import {
  type BouncesOptions,
  createMailroom,
  type DestinationOptions,
  type DomainsOptions,
  type GuardedFetcherOptions,
  type Logger,
  type Mailroom,
  MailroomError,
  type NotificationOptions,
  type ReceivingOptions,
  type Store,
  type TrackingOptions,
  type Transport,
  type UnsubscribeOptions,
  type WebhookOptions,
  type WorkerOptions,
} from '@mailroom/core';
import type { EngineFlags } from '../flags/engine-flags.js';
import { UsageError } from '../output/cli-errors.js';
import type { CliIo } from '../output/io.js';

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
  /**
   * SQLite: the free space in MiB kept for delivering accepted mail (`MAILROOM_SQLITE_RESERVE_MIB`; the
   * SQL store's `sqliteReserveMiB`). @default 64
   */
  sqliteReserveMiB?: number;
}

/** Where delivered messages go: an SMTP relay, Amazon SES, or `.eml` files in a folder. */
export type DeliveryTarget =
  | { kind: 'smtp'; url: string; label: string }
  | {
      kind: 'ses';
      region: string;
      endpoint?: string;
      configurationSet?: string;
      label: string;
    }
  | { kind: 'outbox'; dir: string; label: string };

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
  const reserve = nonEmpty(io.env.MAILROOM_SQLITE_RESERVE_MIB);
  if (reserve === undefined) return { url, label: redactUrl(url) };
  const sqliteReserveMiB = Number(reserve);
  if (!(Number.isFinite(sqliteReserveMiB) && sqliteReserveMiB >= 0)) {
    throw new UsageError(
      `MAILROOM_SQLITE_RESERVE_MIB must be a number of MiB >= 0, got '${reserve}'`,
      command,
    );
  }
  return { url, label: redactUrl(url), sqliteReserveMiB };
}

/**
 * The delivery target: `--outbox`, `--smtp` or `--ses-region` (one of them), else `MAILROOM_SMTP_URL`,
 * else the default outbox folder.
 */
export function resolveDelivery(flags: EngineFlags, io: CliIo, command: string): DeliveryTarget {
  const outbox = nonEmpty(flags.outbox);
  const smtp = nonEmpty(flags.smtp);
  const ses = resolveSes(flags, command);
  if ([outbox, smtp, ses].filter((given) => given !== undefined).length > 1) {
    throw new UsageError('give one of --smtp, --ses-region or --outbox', command);
  }
  if (ses) return ses;
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

/** The SES target from `--ses-region` (with `--ses-endpoint`, `--ses-configuration-set`), if given. */
function resolveSes(flags: EngineFlags, command: string): DeliveryTarget | undefined {
  const region = nonEmpty(flags.sesRegion);
  const endpoint = nonEmpty(flags.sesEndpoint);
  const configurationSet = nonEmpty(flags.sesConfigurationSet);
  if (region === undefined) {
    if (endpoint !== undefined || configurationSet !== undefined) {
      throw new UsageError('--ses-endpoint and --ses-configuration-set need --ses-region', command);
    }
    return undefined;
  }
  if (!/^[a-z0-9-]+$/.test(region)) {
    throw new UsageError(`--ses-region must be an AWS region such as eu-west-1, got '${region}'`, command);
  }
  if (endpoint !== undefined && !/^https?:\/\/[^/]/i.test(endpoint)) {
    throw new UsageError(
      `--ses-endpoint must be an http:// or https:// URL, got '${redactUrl(endpoint)}'`,
      command,
    );
  }
  const label = `${region}${endpoint ? ` at ${redactUrl(endpoint)}` : ''}${configurationSet ? `, configuration set ${configurationSet}` : ''}`;
  return {
    kind: 'ses',
    region,
    ...(endpoint ? { endpoint } : {}),
    ...(configurationSet ? { configurationSet } : {}),
    label,
  };
}

/** How the banners name a delivery target. */
export function describeDelivery(delivery: DeliveryTarget): string {
  if (delivery.kind === 'outbox') return `outbox ${delivery.dir}`;
  return `${delivery.kind} ${delivery.label}`;
}

/**
 * Opens the store and runs its migrations, so that an unreachable or unusable database fails here, with
 * one clear error, rather than on the first request.
 */
export async function openStore(database: DatabaseTarget): Promise<Store> {
  let store: Store | undefined;
  try {
    // Loaded when a command opens a database (kysely and its dialects), not with the command list.
    const { sqlStore } = await import('@mailroom/sql');
    // A 16 MiB SQLite page cache (the SQL package's default is 64, and the file's background thread has
    // its own): serve and worker stay within their memory budget through a large broadcast at the same
    // rate; only a very large CSV import is a little slower (BENCHMARKS.md, delivery-corpus and "CSV
    // sources").
    const opened = sqlStore({
      url: database.url,
      sqliteCacheMiB: 16,
      ...(database.sqliteReserveMiB === undefined ? {} : { sqliteReserveMiB: database.sqliteReserveMiB }),
    });
    store = opened;
    await opened.init();
    return opened;
  } catch (error) {
    await store?.close().catch(() => {});
    throw new MailroomError('STORE_FAILED', `cannot open the database ${database.label}`, { cause: error });
  }
}

/**
 * `@mailroom/ses`, or a failure naming the package to install: it is an optional peer of the cli, since
 * only `--ses-region` needs it (and the AWS SDK it brings, tens of MB).
 */
async function loadSes(): Promise<typeof import('@mailroom/ses')> {
  try {
    return await import('@mailroom/ses');
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    if (code !== 'ERR_MODULE_NOT_FOUND' || !String((error as Error).message).includes('@mailroom/ses'))
      throw error;
    throw new MailroomError(
      'INTERNAL',
      'sending through Amazon SES (--ses-region) needs the `@mailroom/ses` package, an optional peer of @mailroom/cli: install it beside the cli (its tarball mailroom-ses.tgz, README "Use it in your app")',
      { cause: error },
    );
  }
}

/**
 * Creates the transport and, for SMTP and SES, checks that the server answers (`transport.verify`), so
 * that a wrong host, port or endpoint fails at start rather than as retries of every delivery. SES
 * credentials come from the AWS SDK's default provider chain (`AWS_ACCESS_KEY_ID`, a profile, a role).
 */
export async function openTransport(delivery: DeliveryTarget, concurrency?: number): Promise<Transport> {
  // Quoted-printable, not the relay default base64: an .eml of the outbox is read in an editor, and its
  // text and HTML parts read as written there.
  // @mailroom/smtp (nodemailer) is loaded when a command delivers: admin commands and --help never do.
  if (delivery.kind === 'outbox') {
    const { outboxTransport } = await import('@mailroom/smtp');
    return outboxTransport({ dir: delivery.dir, textEncoding: 'quoted-printable' });
  }
  // Loaded only when asked for: the AWS SDK adds about a quarter of a second to every start, and
  // @mailroom/ses is an optional peer an app installs only to send through SES.
  const make: () => Transport =
    delivery.kind === 'smtp'
      ? await import('@mailroom/smtp').then(
          ({ smtpTransport }) =>
            () =>
              smtpTransport(withConnections(delivery.url, concurrency)),
        )
      : await loadSes().then(
          ({ sesTransport }) =>
            () =>
              sesTransport({
                region: delivery.region,
                ...(delivery.endpoint ? { endpoint: delivery.endpoint } : {}),
                ...(delivery.configurationSet ? { configurationSetName: delivery.configurationSet } : {}),
              }),
        );
  let transport: Transport | undefined;
  try {
    const opened = make();
    transport = opened;
    await opened.verify?.();
    return opened;
  } catch (error) {
    await transport?.close?.().catch(() => {});
    const what = delivery.kind === 'smtp' ? 'the SMTP server' : 'Amazon SES in';
    throw new MailroomError('TRANSPORT_TRANSIENT', `cannot reach ${what} ${delivery.label}`, {
      cause: error,
    });
  }
}

/**
 * The SMTP URL with `maxConnections` set to the worker's `--concurrency` when the URL names none: as
 * many connections as sends at once (sends beyond the connections would wait in the pool).
 */
function withConnections(url: string, concurrency: number | undefined): string {
  if (concurrency === undefined) return url;
  try {
    const parsed = new URL(url);
    if (parsed.searchParams.has('maxConnections')) return url;
    parsed.searchParams.set('maxConnections', String(concurrency));
    return parsed.toString();
  } catch {
    // Not a URL: smtpTransport reports it.
    return url;
  }
}

/**
 * Opens the store and, when `delivery` is given, the transport, and builds the engine on them. On failure
 * whatever was opened is closed again.
 */
export async function openEngine(options: {
  database: DatabaseTarget;
  /** A missing Liquid variable fails the delivery (`--strict-variables`). @default false */
  strictVariables?: boolean;
  /** The reputation guard off (`--no-guard`: the engine's `guard: false`). @default false */
  noGuard?: boolean;
  delivery?: DeliveryTarget;
  logger?: Logger;
  worker?: WorkerOptions;
  /** One-click unsubscribe links in broadcasts (their base URL, and the secret if one is configured). */
  unsubscribe?: UnsubscribeOptions;
  /** Open and click tracking (`--track-opens`, `--track-clicks`). */
  tracking?: TrackingOptions;
  /** VERP return paths and bounce handling. */
  bounces?: BouncesOptions;
  /** Provider notifications (SES, Mailgun). */
  notifications?: NotificationOptions;
  /** The guarded fetcher of CSV sources and attachment URLs (`--allow-host`). */
  fetch?: GuardedFetcherOptions;
  /** The webhook sender (`--no-webhooks`, `--webhook-retry-schedule`). */
  webhooks?: WebhookOptions;
  /** Sending domains: DNS servers, the relay, the sending policy, the key sealing secret. */
  domains?: DomainsOptions;
  /** Destinations and their shared limits (`--destination-*`). */
  destinations?: DestinationOptions;
  /** Receiving mail for the app: the base URL of attachment links. */
  receiving?: ReceivingOptions;
}): Promise<OpenedEngine> {
  // A missing optional package is named before the database is opened or migrated.
  if (options.delivery?.kind === 'ses') await loadSes();
  const store = await openStore(options.database);
  let transport: Transport;
  try {
    transport = options.delivery
      ? await openTransport(options.delivery, options.worker?.concurrency)
      : adminTransport;
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
    ...(options.tracking ? { tracking: options.tracking } : {}),
    ...(options.bounces ? { bounces: options.bounces } : {}),
    ...(options.notifications ? { notifications: options.notifications } : {}),
    ...(options.fetch ? { fetch: options.fetch } : {}),
    ...(options.webhooks ? { webhooks: options.webhooks } : {}),
    ...(options.domains ? { domains: options.domains } : {}),
    ...(options.destinations ? { destinations: options.destinations } : {}),
    ...(options.receiving ? { receiving: options.receiving } : {}),
    ...(options.strictVariables ? { strictVariables: true } : {}),
    ...(options.noGuard ? { guard: false as const } : {}),
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
/** The file path of a SQLite URL (`:memory:` as it is), or undefined for a server's URL. */
export function sqlitePath(url: string): string | undefined {
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
