import type { AddressInfo } from 'node:net';
import type {
  BouncesOptions,
  DestinationOptions,
  DomainsOptions,
  Logger,
  Mailroom,
  NotificationOptions,
  WebhookOptions,
  WorkerOptions,
} from '@mailroom/core';
import { MailroomError } from '@mailroom/core';
import { DEFAULT_RETRY_AFTER_SECONDS, type HttpOptions } from '@mailroom/http';
import { mailroomPlugin } from '@mailroom/http/fastify';
import type { InboundServer } from '@mailroom/smtp';
import Fastify from 'fastify';
import { type InboundListen, startInbound } from '../flags/inbound-flags.js';
import { type DemoProject, ensureDemoProject } from './demo-project.js';
import { type DatabaseTarget, type DeliveryTarget, openEngine } from './open-engine.js';

/** Options of {@link startServer}. */
export interface ServerOptions {
  /** Port to listen on; 0 picks a free one. */
  port: number;
  /** Interface to listen on. */
  host: string;
  /** The store's database (opened and migrated before listening). */
  database: DatabaseTarget;
  /** Where messages go (an SMTP server is verified before listening). */
  delivery: DeliveryTarget;
  /** Run the delivery worker in this process. */
  worker: boolean;
  /** Worker tuning (concurrency, rate). */
  workerOptions?: WorkerOptions;
  /** Where the engine and the HTTP layer log (never secrets or bodies). */
  logger: Logger;
  /** The dashboard, `/metrics` and the trusted proxies of the HTTP layer. @default the dashboard at /dashboard, no metrics, no proxy */
  http?: Pick<HttpOptions, 'dashboard' | 'metrics' | 'trustProxy'>;
  /**
   * Where recipients reach the API: the base of the one-click unsubscribe links.
   * @default the address the server listens on, `http://HOST:PORT`
   */
  publicUrl?: string;
  /** The key that signs unsubscribe links. @default a secret generated once and kept in the database */
  unsubscribeSecret?: string;
  /** Open and click tracking, on `publicUrl`. @default both off */
  tracking?: { opens: boolean; clicks: boolean };
  /** VERP return paths (`--bounce-domain`). */
  bounces?: BouncesOptions;
  /** Run the inbound SMTP listener for the bounce domain (`--inbound-port`); needs `bounces`. */
  inbound?: InboundListen;
  /** Provider notifications served at `/inbound/ses` and `/inbound/mailgun`. */
  notifications?: NotificationOptions;
  /**
   * `HOST:PORT` entries CSV sources and attachment URLs may be fetched from although their address is
   * private or loopback (the guarded fetcher's `allowHosts`). @default [] (public hosts only)
   */
  allowHosts?: string[];
  /** The webhook sender, run with the worker unless `send` is false. */
  webhooks?: WebhookOptions;
  /** Sending domains: DNS servers, the relay, the sending policy (`--domain-sending`). */
  domains?: DomainsOptions;
  /** Destinations and their shared limits (`--destination-*`). */
  destinations?: DestinationOptions;
  /**
   * How the commands the demo's welcome mail names start the CLI (`npx mailroom`) and which `--database`
   * they repeat. @default `npx mailroom`, the default database
   */
  commands?: { cli?: string; database?: string; file?: string };
  /** A missing Liquid variable fails the delivery instead of rendering empty. @default false */
  strictVariables?: boolean;
  /** The reputation guard off (`--no-guard`). @default false */
  noGuard?: boolean;
}

/** A running server. */
export interface RunningServer {
  /** Base URL a client on this machine reaches the API at (`http://127.0.0.1:3000`). */
  url: string;
  /** The address actually bound (the real port when 0 was asked). */
  address: { host: string; port: number };
  /** The base of the one-click unsubscribe links (`publicUrl`, else {@link RunningServer.url}). */
  publicUrl: string;
  /** The dashboard's URL, unless it is off. */
  dashboardUrl: string | undefined;
  /** The Prometheus endpoint's URL, when it is on. */
  metricsUrl: string | undefined;
  /** The engine behind the server. */
  mailroom: Mailroom;
  /** The demo project, when this start created it (its secret is here, once). */
  demo: DemoProject | undefined;
  /** The inbound SMTP listener, when it runs. */
  inbound: { host: string; port: number } | undefined;
  /**
   * Graceful shutdown: stops taking requests (in-flight ones are answered), lets the worker finish the
   * sends it started, then closes the transport and the store. Idempotent.
   */
  stop(): Promise<void>;
}

/**
 * Opens the store (failing on an unreachable database) and the transport (failing on an unreachable SMTP
 * server), creates the demo project on an empty database, mounts the HTTP adapter on Fastify and starts
 * listening and, unless disabled, the in-process worker.
 */
export async function startServer(options: ServerOptions): Promise<RunningServer> {
  // Known once listening (the port may be 0 until then); no message is composed before that.
  let listeningUrl = `http://${reachableHost(options.host)}:${options.port}`;
  const publicUrl = () => options.publicUrl ?? listeningUrl;
  const { mailroom, store } = await openEngine({
    database: options.database,
    delivery: options.delivery,
    logger: options.logger,
    ...(options.workerOptions ? { worker: options.workerOptions } : {}),
    ...(options.allowHosts?.length ? { fetch: { allowHosts: options.allowHosts } } : {}),
    ...(options.webhooks ? { webhooks: options.webhooks } : {}),
    ...(options.domains ? { domains: options.domains } : {}),
    ...(options.destinations ? { destinations: options.destinations } : {}),
    ...(options.strictVariables ? { strictVariables: true } : {}),
    ...(options.noGuard ? { noGuard: true } : {}),
    unsubscribe: {
      baseUrl: publicUrl,
      ...(options.unsubscribeSecret ? { secret: options.unsubscribeSecret } : {}),
    },
    ...(options.tracking?.opens || options.tracking?.clicks
      ? { tracking: { baseUrl: publicUrl, ...options.tracking } }
      : {}),
    ...(options.bounces ? { bounces: options.bounces } : {}),
    ...(options.notifications ? { notifications: options.notifications } : {}),
    // Received attachments are served by this server: their links start at its public URL. The SPF,
    // DKIM and DMARC checks of received mail ask the DNS servers the sending domains' checks ask.
    receiving: {
      baseUrl: publicUrl,
      ...(options.domains?.dnsServers ? { dnsServers: options.domains.dnsServers } : {}),
    },
  });
  const app = Fastify({ logger: false });
  let inbound: InboundServer | undefined;
  try {
    const demo = await ensureDemoProject(mailroom, store, options.commands);
    // For a load balancer's readiness check: 503 while the store cannot take new mail (the worker may
    // still be delivering what was accepted), with the state and since when.
    app.get('/health', async (_request, reply) => {
      const store = await mailroom.health();
      if (store.state === 'ok') return { status: 'ok', store };
      return reply
        .code(503)
        .header('retry-after', String(DEFAULT_RETRY_AFTER_SECONDS))
        .send({ status: store.state, store });
    });
    await app.register(mailroomPlugin, { mailroom, logger: options.logger, ...options.http });
    await app.listen({ port: options.port, host: options.host }).catch((error: unknown) => {
      throw listenError(error, options.host, options.port);
    });
    const bound = app.server.address() as AddressInfo;
    listeningUrl = `http://${reachableHost(bound.address)}:${bound.port}`;
    if (options.inbound)
      inbound = await startInbound(mailroom.inbound, options.inbound, options.logger, mailroom.receiving);
    if (options.worker) mailroom.worker.start();

    let stopping: Promise<void> | undefined;
    return {
      url: listeningUrl,
      address: { host: bound.address, port: bound.port },
      publicUrl: publicUrl(),
      dashboardUrl:
        options.http?.dashboard?.enabled === false
          ? undefined
          : `${listeningUrl}${(options.http?.dashboard?.prefix ?? '/dashboard').replace(/\/+$/, '')}`,
      metricsUrl: options.http?.metrics
        ? `${listeningUrl}${options.http.metrics.path ?? '/metrics'}`
        : undefined,
      mailroom,
      demo,
      inbound: inbound ? { host: inbound.host, port: inbound.port } : undefined,
      stop() {
        stopping ??= (async () => {
          await inbound?.close();
          await app.close();
          await mailroom.worker.stop();
          await mailroom.close();
        })();
        return stopping;
      },
    };
  } catch (error) {
    await inbound?.close().catch(() => {});
    await app.close().catch(() => {});
    await mailroom.close().catch(() => {});
    throw error;
  }
}

/**
 * Why the server cannot listen, saying what to do: a port in use (a second `serve`, another server) is
 * the usual case, and `--port` is the way out.
 */
function listenError(error: unknown, host: string, port: number): MailroomError {
  const code = (error as { code?: unknown } | null)?.code;
  if (code === 'EADDRINUSE') {
    return new MailroomError(
      'INTERNAL',
      `port ${port} on ${host} is in use (another mailroom serve, or another server): stop it, or pick another port with --port N (or PORT=N; --port 0 takes any free port)`,
      { cause: error },
    );
  }
  if (code === 'EACCES') {
    return new MailroomError(
      'INTERNAL',
      `not allowed to listen on ${host}:${port} (ports below 1024 need privileges): pick another port with --port N`,
      { cause: error },
    );
  }
  return new MailroomError('INTERNAL', `cannot listen on ${host}:${port}`, { cause: error });
}

/** The host to put in a URL for a client on this machine: a wildcard bind is reached on loopback. */
function reachableHost(address: string): string {
  if (address === '0.0.0.0') return '127.0.0.1';
  if (address === '::') return '[::1]';
  return address.includes(':') ? `[${address}]` : address;
}
