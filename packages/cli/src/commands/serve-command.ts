import { writeFileSync } from 'node:fs';
import { dirname, isAbsolute, join, relative } from 'node:path';
import { resolveRenderThreads, WORKER_DEFAULTS } from '@mailroom/core';
import { parseBoundedInt } from '../flags/args.js';
import { DESTINATION_FLAGS, DESTINATION_FLAGS_HELP, destinationsOf } from '../flags/destination-flags.js';
import {
  DOMAIN_FLAGS,
  DOMAIN_FLAGS_HELP,
  dnsServersOf,
  domainsOptionsOf,
  sesRelayOf,
} from '../flags/domain-flags.js';
import {
  allowHostsOf,
  DELIVERY_FLAGS,
  DELIVERY_FLAGS_HELP,
  deliveryFlagsOf,
  publicUrlOf,
  threadsLabel,
  trackingFlagsOf,
  unsubscribeSecretOf,
  webhookOptionsOf,
  workerOptionsOf,
} from '../flags/engine-flags.js';
import {
  BOUNCE_FLAGS,
  BOUNCE_FLAGS_HELP,
  bouncesOf,
  INBOUND_FLAGS,
  INBOUND_FLAGS_HELP,
  inboundListenOf,
  NOTIFICATIONS_HELP,
  notificationsOf,
} from '../flags/inbound-flags.js';
import { trustProxyOf } from '../flags/trust-proxy-flag.js';
import { EXIT_OK, UsageError } from '../output/cli-errors.js';
import { type CliIo, println } from '../output/io.js';
import { logLevelOf } from '../output/log-level.js';
import {
  cliCommandOf,
  DEMO_TEMPLATE_FILE,
  type DemoProject,
  demoCurlLine,
  templateAddHint,
} from '../server/demo-project.js';
import {
  type DeliveryTarget,
  describeDelivery,
  resolveDatabase,
  resolveDelivery,
  sqlitePath,
} from '../server/open-engine.js';
import { runUntilShutdown } from '../server/shutdown.js';
import type { RunningServer } from '../server/start-server.js';
import type { Command } from './command.js';

/** `mailroom serve`: the HTTP API and an in-process worker on embedded defaults. */
export const serveCommand: Command = {
  name: 'serve',
  localOnly: "runs the server on the database's machine",
  summary: 'Run the HTTP API with an in-process delivery worker',
  help: `Usage: mailroom serve [--port 3000] [--host 127.0.0.1] [--database URL|FILE]
                      [--smtp URL | --ses-region REGION | --outbox DIR] [--no-worker] [--concurrency N] [--render-threads N] [--rate N] [--lease SECONDS]
                      [--public-url URL] [--allow-host HOST:PORT]...
                      [--track-opens] [--track-clicks]
                      [--no-dashboard | --dashboard-prefix PATH]
                      [--metrics] [--trust-proxy ADDRESS[,ADDRESS]...]... [--log-level LEVEL]
                      [--bounce-domain DOMAIN [--inbound-port P] [--inbound-host HOST]
                       [--inbound-rate N] [--inbound-trusted-relay CIDR]...
                       [--tls-key FILE --tls-cert FILE]]
                      [--domain-sending warn|enforce] [--dns-server HOST:PORT]... [--relay-ip IP]...

Serves POST /send/mail and POST /send/mail/broadcast (and /openapi.json, and the
one-click unsubscribe links of broadcasts at /unsubscribe/TOKEN) and delivers
in the same process. On an empty database it creates a demo project and prints its
secret once, with a curl line that sends a message. SIGTERM or Ctrl-C stops taking
requests, finishes the sends in flight and exits.

Options:
  --port N           port to listen on, 0 for any free port (default: PORT, else 3000)
  --host HOST        interface to listen on (default: 127.0.0.1; 0.0.0.0 for all)
${DELIVERY_FLAGS_HELP}
${BOUNCE_FLAGS_HELP}
  --inbound-port P   also run the inbound SMTP listener on port P: it takes the bounces (DSNs),
                     complaints (ARF) and replies mailed to the bounce domain, and refuses
                     every other recipient (needs --bounce-domain; point the domain's MX here)
${INBOUND_FLAGS_HELP}
${DOMAIN_FLAGS_HELP}
${DESTINATION_FLAGS_HELP}
  --no-worker        do not deliver in this process (run mailroom worker instead)
  --no-dashboard     do not serve the project dashboard (default: served at /dashboard,
                     signed in with a project secret)
  --dashboard-prefix PATH
                     serve the dashboard at PATH instead of /dashboard
  --metrics          serve Prometheus metrics at GET /metrics; with MAILROOM_METRICS_TOKEN set
                     (which also turns them on) a scrape needs "Authorization: Bearer TOKEN"
  --trust-proxy ADDRESS
                     a reverse proxy in front of the server (IP address or CIDR range; repeatable,
                     or comma-separated): from it, the client address (for the limit of wrong keys
                     and the logs) is the right-most untrusted address of its Forwarded or
                     X-Forwarded-For header; from anyone else those headers are ignored
  --log-level LEVEL  debug, info, warn, error or silent (default: MAILROOM_LOG_LEVEL, else
                     info); JSON lines on stderr, debug adds one line per request

${NOTIFICATIONS_HELP}`,
  flags: {
    ...DELIVERY_FLAGS,
    ...BOUNCE_FLAGS,
    ...INBOUND_FLAGS,
    ...DOMAIN_FLAGS,
    ...DESTINATION_FLAGS,
    'inbound-port': { type: 'string' },
    port: { type: 'string' },
    host: { type: 'string' },
    'no-worker': { type: 'boolean' },
    'no-dashboard': { type: 'boolean' },
    'dashboard-prefix': { type: 'string' },
    metrics: { type: 'boolean' },
    'log-level': { type: 'string' },
    'trust-proxy': { type: 'string', multiple: true },
  },
  positionals: { min: 0, max: 0, names: '' },
  async run(args, io) {
    const portText = args.string('port') ?? io.env.PORT;
    const port =
      portText === undefined || portText === ''
        ? 3000
        : parseBoundedInt(
            portText,
            args.string('port') === undefined ? 'PORT' : '--port',
            { min: 0, max: 65535 },
            this.name,
          );
    const host = args.string('host') ?? '127.0.0.1';
    const worker = !args.flag('no-worker');
    const workerOptions = workerOptionsOf(args);
    const publicUrl = publicUrlOf(args, io.env, this.name);
    const unsubscribeSecret = unsubscribeSecretOf(io.env, this.name);
    const bounces = bouncesOf(args, io.env, this.name);
    const notifications = notificationsOf(io.env);
    const inboundPort = args.int('inbound-port', { min: 0, max: 65535 });
    if (inboundPort !== undefined && !bounces) {
      throw new UsageError('--inbound-port needs --bounce-domain (the domain it takes mail for)', this.name);
    }
    const inbound =
      inboundPort === undefined ? undefined : await inboundListenOf(args, inboundPort, this.name);
    const allowHosts = allowHostsOf(args, io.env, this.name);
    const webhooks = webhookOptionsOf(args, this.name);
    const logLevel = logLevelOf(args.string('log-level'), io.env.MAILROOM_LOG_LEVEL, this.name);
    const dashboardPrefix = args.string('dashboard-prefix');
    const trustProxy = trustProxyOf(args.list('trust-proxy'), this.name);
    const metricsToken = io.env.MAILROOM_METRICS_TOKEN?.trim() || undefined;
    const database = resolveDatabase(args.string('database'), io, this.name);
    const delivery = resolveDelivery(deliveryFlagsOf(args), io, this.name);
    const domains = domainsOptionsOf(args, io.env, this.name, sesRelayOf(delivery.kind));
    const destinations = destinationsOf(args, io.cwd, dnsServersOf(args, io.env, this.name), this.name);
    const databaseFlag = args.string('database');
    // For the printed commands: the flag as given, except a server URL's password (redacted).
    const printedDatabase = databaseFlag
      ? /^\w+:\/\//.test(databaseFlag)
        ? database.label
        : databaseFlag
      : undefined;
    const cli = cliCommandOf(io.env);
    const template = demoTemplatePath(database.url, io.cwd);
    // Loaded here, not with the command list: the HTTP server (fastify, @mailroom/http) and the logger
    // (pino) are what serve alone needs, and every other command and --help start without them.
    const [{ startServer }, { cliLogger }] = await Promise.all([
      import('../server/start-server.js'),
      import('../output/cli-logger.js'),
    ]);
    const server = await startServer({
      port,
      host,
      database,
      delivery,
      worker,
      workerOptions,
      logger: cliLogger(io.stderr, logLevel),
      http: {
        dashboard: args.flag('no-dashboard')
          ? { enabled: false }
          : { ...(dashboardPrefix ? { prefix: dashboardPrefix } : {}) },
        ...(args.flag('metrics') || metricsToken
          ? { metrics: metricsToken ? { token: metricsToken } : {} }
          : {}),
        ...(trustProxy.length > 0 ? { trustProxy } : {}),
      },
      ...(publicUrl ? { publicUrl } : {}),
      ...(unsubscribeSecret ? { unsubscribeSecret } : {}),
      tracking: trackingFlagsOf(args),
      ...(bounces ? { bounces } : {}),
      ...(inbound ? { inbound } : {}),
      ...(notifications ? { notifications } : {}),
      allowHosts,
      webhooks,
      domains,
      ...(destinations ? { destinations } : {}),
      strictVariables: args.flag('strict-variables'),
      noGuard: args.flag('no-guard'),
      commands: { cli, file: template.printed, ...(printedDatabase ? { database: printedDatabase } : {}) },
    });
    printBanner(io, server, {
      database: database.label,
      ...(printedDatabase ? { databaseFlag: printedDatabase } : {}),
      cli,
      template,
      allowHosts,
      delivery,
      worker,
      concurrency: workerOptions.concurrency,
      renderThreads: resolveRenderThreads(workerOptions.renderThreads),
      bounceDomain: bounces?.domain,
    });
    await runUntilShutdown(io, async () => {
      println(io.stderr, 'mailroom: stopping (finishing requests and sends in flight)...');
      await server.stop();
      println(io.stderr, 'mailroom: stopped');
    });
    return EXIT_OK;
  },
};

function printBanner(
  io: CliIo,
  server: RunningServer,
  setup: {
    database: string;
    delivery: DeliveryTarget;
    worker: boolean;
    concurrency: number | undefined;
    renderThreads: number;
    bounceDomain: string | undefined;
    allowHosts: string[];
    /** `--database` as the printed commands must repeat it (absent: the default or the environment's). */
    databaseFlag?: string;
    /** How the printed commands start the CLI (`npx mailroom`). */
    cli: string;
    /** Where the demo template is written, and how the printed command names it. */
    template: DemoTemplatePath;
  },
): void {
  const { delivery } = setup;
  const out = io.stdout;
  const where =
    delivery.kind === 'outbox'
      ? `${describeDelivery(delivery)} (one .eml file per message)`
      : describeDelivery(delivery);
  println(out, `Mailroom is listening on http://${hostForUrl(server.address.host)}:${server.address.port}`);
  println(out, `  database  ${setup.database}`);
  println(out, `  delivery  ${where}`);
  println(out, `  links     ${server.publicUrl}/unsubscribe/... (one-click unsubscribe in broadcasts)`);
  if (setup.bounceDomain) {
    const listener = server.inbound
      ? `inbound SMTP on ${hostForUrl(server.inbound.host)}:${server.inbound.port}`
      : 'no inbound listener here (mailroom inbound)';
    println(out, `  bounces   b+TOKEN@${setup.bounceDomain.toLowerCase()} (${listener})`);
  }
  if (server.dashboardUrl) println(out, `  dashboard ${server.dashboardUrl} (sign in with a project secret)`);
  if (server.metricsUrl) println(out, `  metrics   ${server.metricsUrl} (Prometheus)`);
  if (setup.allowHosts.length > 0) {
    println(out, `  fetches   also from ${setup.allowHosts.join(', ')} (allow-listed)`);
  }
  println(
    out,
    `  worker    ${setup.worker ? `in-process (concurrency ${setup.concurrency ?? WORKER_DEFAULTS.concurrency}, ${threadsLabel(setup.renderThreads)})` : 'off: run mailroom worker to deliver'}`,
  );
  const { demo } = server;
  const database = setup.databaseFlag === undefined ? '' : ` --database ${setup.databaseFlag}`;
  if (!demo) {
    // A secret exists in clear only when it is made: a later start has none to show, so say how to get one.
    println(out);
    println(
      out,
      'No secret is shown for an existing database (each is shown once, when it is made). To get one:',
    );
    println(out, `  ${setup.cli} project list${database}   # the project ids`);
    println(
      out,
      `  ${setup.cli} key create --project PROJECT_ID --scope full --name NAME${database}   # a new key, its secret printed once`,
    );
    return;
  }
  println(out);
  println(
    out,
    `Created the demo project "${demo.project.name}" (${demo.project.id}) with the sender ${demo.sender} and the MJML template "${demo.templateRef}".`,
  );
  println(out, 'Its live secret, shown only this once (store it now):');
  println(out, `  ${demo.secret}`);
  println(out);
  println(out, 'Send a message:');
  println(out, `  ${demoCurlLine(server.url, demo.secret, demo.sender, demo.templateRef)}`);
  println(out);
  println(
    out,
    delivery.kind === 'outbox'
      ? `The message lands in ${delivery.dir} as an .eml file.`
      : `The message is delivered through ${describeDelivery(delivery)}.`,
  );
  println(out);
  println(
    out,
    `Use your own template: edit ${writeDemoTemplate(setup.template, demo)}, then run (from this directory):`,
  );
  println(
    out,
    `  ${templateAddHint(demo.project.id, setup.databaseFlag, setup.cli, setup.template.printed)}`,
  );
}

/** Where the demo template goes: its absolute path, and the path the printed command names. */
interface DemoTemplatePath {
  path: string;
  printed: string;
}

/**
 * The demo template's file: next to the SQLite file (the folder of the demo's data: `./mailroom.db` puts it
 * in the working directory), else in the working directory; named from the working directory, where the
 * printed command runs.
 */
function demoTemplatePath(databaseUrl: string, cwd: string): DemoTemplatePath {
  const file = sqlitePath(databaseUrl);
  const dir = file && file !== ':memory:' ? dirname(file) : cwd;
  const path = join(dir, DEMO_TEMPLATE_FILE);
  const fromCwd = relative(cwd, path);
  return { path, printed: fromCwd.startsWith('..') || isAbsolute(fromCwd) ? path : fromCwd };
}

/**
 * Writes the demo template to `welcome.mjml` (see {@link demoTemplatePath}), for the printed
 * `template add` command to name; a file of that name already there is kept. Returns what the banner says about it.
 */
function writeDemoTemplate(template: DemoTemplatePath, demo: DemoProject): string {
  try {
    writeFileSync(template.path, `${demo.source}\n`, { flag: 'wx' });
    return `${template.printed} (the demo template, written there now)`;
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    return code === 'EEXIST'
      ? `${template.printed} (a file of yours, kept as it was)`
      : `a ${template.printed} of yours (it could not be written: ${code ?? 'error'})`;
  }
}

function hostForUrl(address: string): string {
  return address.includes(':') ? `[${address}]` : address;
}
