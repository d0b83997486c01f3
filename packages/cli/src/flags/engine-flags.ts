import { parseAllowHost, type WebhookOptions, type WorkerOptions } from '@mailroom/core';
import { UsageError } from '../output/cli-errors.js';
import type { FlagSpec, ParsedArgs } from './args.js';

/** The `--database`, `--smtp`, `--outbox` and `--ses-*` flags, as given (absent ones undefined). */
export interface EngineFlags {
  /** `--database`. */
  database?: string | undefined;
  /** `--smtp`. */
  smtp?: string | undefined;
  /** `--outbox`. */
  outbox?: string | undefined;
  /** `--ses-region`. */
  sesRegion?: string | undefined;
  /** `--ses-endpoint`. */
  sesEndpoint?: string | undefined;
  /** `--ses-configuration-set`. */
  sesConfigurationSet?: string | undefined;
}

/** Flags of the commands that deliver (`serve`, `worker`): the database, SMTP or outbox, and worker tuning. */
export const DELIVERY_FLAGS: FlagSpec = {
  database: { type: 'string' },
  smtp: { type: 'string' },
  outbox: { type: 'string' },
  'ses-region': { type: 'string' },
  'ses-endpoint': { type: 'string' },
  'ses-configuration-set': { type: 'string' },
  concurrency: { type: 'string' },
  'render-threads': { type: 'string' },
  rate: { type: 'string' },
  lease: { type: 'string' },
  'public-url': { type: 'string' },
  'track-opens': { type: 'boolean' },
  'track-clicks': { type: 'boolean' },
  'allow-host': { type: 'string', multiple: true },
  'no-webhooks': { type: 'boolean' },
  'webhook-retry-schedule': { type: 'string' },
  'webhook-busy-rate': { type: 'string' },
  'strict-variables': { type: 'boolean' },
  'no-guard': { type: 'boolean' },
};

/** Help lines of {@link DELIVERY_FLAGS}. */
export const DELIVERY_FLAGS_HELP = `  --database URL     SQLite file, sqlite:FILE, postgres://... or mysql://...
                     (default: MAILROOM_DATABASE_URL, else ./mailroom.db)
  --smtp URL         deliver through this SMTP server, smtp://user:pass@host:587 or smtps://...
                     (default: MAILROOM_SMTP_URL; with neither, messages go to the outbox)
  --ses-region REGION
                     deliver through Amazon SES (API v2) in REGION; credentials from the AWS
                     SDK's chain (AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY, AWS_PROFILE, a role)
  --ses-endpoint URL another SES endpoint (a VPC endpoint, or a local emulator)
  --ses-configuration-set NAME
                     send with this SES configuration set (its bounce and complaint events)
  --outbox DIR       write each message as an .eml file into DIR (default: ./.mailroom/outbox)
  --concurrency N    deliveries sent at once by the worker, and its SMTP connections unless
                     the --smtp URL sets maxConnections (default: 8)
  --render-threads N threads that render recipients and build their MIME, 0 for none
                     (default: serve 1 where the machine has 2 or more cores, else 0; worker 0,
                     as workers scale by processes, one per core)
  --rate N           at most N messages per second from this worker (default: unlimited)
  --lease SECONDS    how long deliveries this worker claimed stay its own without a renewal: a
                     worker that dies gives them back to the others after this (5 to 3600,
                     default: 60)
  --public-url URL   where recipients reach this server's HTTP API: the base of the one-click
                     unsubscribe links in broadcasts (default: MAILROOM_PUBLIC_URL; serve: the
                     address it listens on). Links are signed with MAILROOM_UNSUBSCRIBE_SECRET,
                     else with a secret generated once and kept in the database
  --allow-host HOST:PORT
                     let CSV sources and attachment URLs be fetched from HOST:PORT although
                     it is private or loopback (a MinIO next to the app: minio.internal:9000,
                     127.0.0.1:9000, [::1]:9000); exact host and port, repeatable. Without it
                     such URLs are refused (FETCH_REFUSED). Default: MAILROOM_ALLOW_HOSTS,
                     comma-separated
  --no-webhooks      do not POST events to the projects' webhook endpoints from this process
                     (default: the worker also runs the webhook sender)
  --webhook-retry-schedule MS,MS,...
                     waits between webhook attempts, in milliseconds (default: Svix's 5 s, 5 min,
                     30 min, 2 h, 5 h, 10 h, 10 h)
  --webhook-busy-rate N
                     while this worker has deliveries in flight, POST at most N webhook messages
                     per second, 0 for no cap; they catch up once it is idle (default: 100)
  --track-opens      add an open pixel (PUBLIC-URL/t/o/TOKEN.gif) to HTML messages (default: off)
  --track-clicks     route the http(s) links of HTML messages through PUBLIC-URL/t/c/TOKEN
                     (default: off); see docs/tracking.md. A mailing can turn either off with
                     options.track
  --strict-variables a Liquid variable the recipient's data lacks ({{ recipient.fristName }})
                     fails that delivery with an error naming it, instead of rendering empty
                     (default: off; mailroom template preview --strict-variables checks first)
  --no-guard         turn the reputation guard off in this process: no pause of a broadcast,
                     destination or project by its rules (default: on; README, "Pause, resume and
                     the reputation guard"). Operators' pauses still hold`;

/** `--track-opens` and `--track-clicks`, as given (both false by default). */
export function trackingFlagsOf(args: ParsedArgs): { opens: boolean; clicks: boolean } {
  return { opens: args.flag('track-opens'), clicks: args.flag('track-clicks') };
}

/**
 * The public base URL from `--public-url`, else `MAILROOM_PUBLIC_URL`, without a trailing slash; undefined
 * when neither is given. Anything but an absolute http(s) URL without query or fragment is a usage error.
 */
export function publicUrlOf(
  args: ParsedArgs,
  env: Readonly<Record<string, string | undefined>>,
  command: string,
): string | undefined {
  const given = args.string('public-url') ?? env.MAILROOM_PUBLIC_URL;
  if (given === undefined || given.trim() === '') return undefined;
  let url: URL | undefined;
  try {
    url = new URL(given.trim());
  } catch {
    url = undefined;
  }
  if (
    !url ||
    (url.protocol !== 'http:' && url.protocol !== 'https:') ||
    url.search !== '' ||
    url.hash !== ''
  ) {
    throw new UsageError(
      `--public-url must be an http:// or https:// URL without query, got '${given}'`,
      command,
    );
  }
  return url.toString().replace(/\/+$/, '');
}

/**
 * The guarded fetcher's allow-list from `--allow-host` (repeatable), else `MAILROOM_ALLOW_HOSTS`
 * (comma-separated), as given; empty when neither is set. An entry that is not `HOST:PORT` is a usage error.
 */
export function allowHostsOf(
  args: ParsedArgs,
  env: Readonly<Record<string, string | undefined>>,
  command: string,
): string[] {
  const flags = args.list('allow-host');
  const label = flags.length > 0 ? '--allow-host' : 'MAILROOM_ALLOW_HOSTS';
  const entries = flags.length > 0 ? flags : (env.MAILROOM_ALLOW_HOSTS ?? '').split(',');
  const hosts = entries.map((entry) => entry.trim()).filter((entry) => entry !== '' || flags.length > 0);
  for (const host of hosts) {
    try {
      parseAllowHost(host);
    } catch {
      throw new UsageError(
        `${label} must be HOST:PORT (for example 127.0.0.1:9000, minio.internal:9000 or [::1]:9000), got '${host}'`,
        command,
      );
    }
  }
  return hosts;
}

/** `MAILROOM_UNSUBSCRIBE_SECRET`, if set: at least 16 characters, else a usage error. */
export function unsubscribeSecretOf(
  env: Readonly<Record<string, string | undefined>>,
  command: string,
): string | undefined {
  const secret = env.MAILROOM_UNSUBSCRIBE_SECRET;
  if (secret === undefined || secret === '') return undefined;
  if (secret.length < 16) {
    throw new UsageError('MAILROOM_UNSUBSCRIBE_SECRET must have at least 16 characters', command);
  }
  return secret;
}

/** The delivery flags (`--smtp`, `--outbox`, `--ses-*`) as given. */
export function deliveryFlagsOf(args: ParsedArgs): EngineFlags {
  return {
    smtp: args.string('smtp'),
    outbox: args.string('outbox'),
    sesRegion: args.string('ses-region'),
    sesEndpoint: args.string('ses-endpoint'),
    sesConfigurationSet: args.string('ses-configuration-set'),
  };
}

/** The worker settings given by `--concurrency`, `--render-threads`, `--rate` and `--lease`. */
export function workerOptionsOf(args: ParsedArgs): WorkerOptions {
  const concurrency = args.int('concurrency', { min: 1, max: 1000 });
  const renderThreads = args.int('render-threads', { min: 0, max: 64 });
  const rate = args.int('rate', { min: 1, max: 1_000_000 });
  const lease = args.int('lease', { min: 5, max: 3600 });
  return {
    ...(lease === undefined ? {} : { leaseMs: lease * 1000 }),
    ...(concurrency === undefined ? {} : { concurrency }),
    ...(renderThreads === undefined ? {} : { renderThreads }),
    ...(rate === undefined ? {} : { ratePerSecond: rate }),
  };
}

/** `1 render thread`, `no render threads`, ... (the start banners). */
export function threadsLabel(threads: number): string {
  return `${threads === 0 ? 'no' : threads} render thread${threads === 1 ? '' : 's'}`;
}

/** The webhook sender settings given by `--no-webhooks`, `--webhook-retry-schedule`, `--webhook-busy-rate`. */
export function webhookOptionsOf(args: ParsedArgs, command: string): WebhookOptions {
  const busyRate = args.string('webhook-busy-rate');
  const busy = busyRate === undefined ? undefined : Number(busyRate);
  if (busy !== undefined && !(Number.isFinite(busy) && busy >= 0)) {
    throw new UsageError(
      `--webhook-busy-rate must be a number of POSTs per second, 0 or more, got '${busyRate}'`,
      command,
    );
  }
  const schedule = args.string('webhook-retry-schedule');
  const waits = schedule?.split(',').map((part) => Number(part.trim()));
  if (waits?.some((ms) => !Number.isInteger(ms) || ms < 0 || ms > 7 * 86_400_000)) {
    throw new UsageError(
      `--webhook-retry-schedule must be milliseconds separated by commas, got '${schedule}'`,
      command,
    );
  }
  return {
    ...(args.flag('no-webhooks') ? { send: false } : {}),
    ...(waits ? { retryScheduleMs: waits } : {}),
    ...(busy !== undefined ? { busyRatePerSecond: busy } : {}),
  };
}
