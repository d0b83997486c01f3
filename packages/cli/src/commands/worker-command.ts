import { resolveRenderThreads, WORKER_DEFAULTS } from '@mailroom/core';
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
import { BOUNCE_FLAGS, BOUNCE_FLAGS_HELP, bouncesOf } from '../flags/inbound-flags.js';
import { EXIT_OK, UsageError } from '../output/cli-errors.js';
import { println } from '../output/io.js';
import { logLevelOf } from '../output/log-level.js';
import { describeDelivery, openEngine, resolveDatabase, resolveDelivery } from '../server/open-engine.js';
import { runUntilShutdown } from '../server/shutdown.js';
import type { Command } from './command.js';

/**
 * Render threads of a `mailroom worker` without `--render-threads`: none. A worker is the unit of scale
 * (one process per core, docs/deployment.md), so a second core is another worker's, or the database's:
 * a render thread per worker puts two rendering threads on each core beside PostgreSQL and the relay, and
 * the hand-over to the thread and back then costs more CPU per message than the thread saves (issue 42:
 * 2 workers on 2 cores used 678-806 µs per message with a thread each, 455-592 without; BENCHMARKS.md).
 * `serve` keeps the engine's `auto` (one thread from two cores): it is one process per machine.
 */
export const WORKER_RENDER_THREADS = 0;

/** `mailroom worker`: a delivery worker process, without HTTP. */
export const workerCommand: Command = {
  name: 'worker',
  localOnly: "runs a worker on the database's machine",
  summary: 'Run a delivery worker only (run several for scale)',
  help: `Usage: mailroom worker [--database URL|FILE] [--smtp URL | --ses-region REGION | --outbox DIR] [--concurrency N] [--render-threads N] [--rate N] [--lease SECONDS]
                       [--public-url URL] [--allow-host HOST:PORT]... [--bounce-domain DOMAIN]
                       [--domain-sending warn|enforce] [--dns-server HOST:PORT]... [--relay-ip IP]...

Claims due deliveries from the database, renders and sends them. Several workers
may run against one PostgreSQL or MySQL database (and one SQLite file on one
machine): each delivery is leased to one worker at a time. SIGTERM or Ctrl-C
finishes the sends in flight and exits.

Options:
${DELIVERY_FLAGS_HELP}
${BOUNCE_FLAGS_HELP}
${DOMAIN_FLAGS_HELP}
${DESTINATION_FLAGS_HELP}
  --log-level LEVEL  debug, info, warn, error or silent (default: MAILROOM_LOG_LEVEL, else
                     info); JSON lines on stderr`,
  flags: {
    ...DELIVERY_FLAGS,
    ...BOUNCE_FLAGS,
    ...DOMAIN_FLAGS,
    ...DESTINATION_FLAGS,
    'log-level': { type: 'string' },
  },
  positionals: { min: 0, max: 0, names: '' },
  async run(args, io) {
    const workerOptions = { renderThreads: WORKER_RENDER_THREADS, ...workerOptionsOf(args) };
    // Without a public URL this worker cannot link to an unsubscribe page: broadcasts then go without one.
    const publicUrl = publicUrlOf(args, io.env, this.name);
    const unsubscribeSecret = unsubscribeSecretOf(io.env, this.name);
    const tracking = trackingFlagsOf(args);
    if ((tracking.opens || tracking.clicks) && !publicUrl) {
      throw new UsageError(
        '--track-opens and --track-clicks need --public-url (or MAILROOM_PUBLIC_URL)',
        this.name,
      );
    }
    const bounces = bouncesOf(args, io.env, this.name);
    const allowHosts = allowHostsOf(args, io.env, this.name);
    const webhooks = webhookOptionsOf(args, this.name);
    const database = resolveDatabase(args.string('database'), io, this.name);
    const delivery = resolveDelivery(deliveryFlagsOf(args), io, this.name);
    const domains = domainsOptionsOf(args, io.env, this.name, sesRelayOf(delivery.kind));
    const destinations = destinationsOf(args, io.cwd, dnsServersOf(args, io.env, this.name), this.name);
    // pino, loaded when the worker makes its logger (the command list and --help start without it).
    const { cliLogger } = await import('../output/cli-logger.js');
    const { mailroom } = await openEngine({
      database,
      delivery,
      logger: cliLogger(
        io.stderr,
        logLevelOf(args.string('log-level'), io.env.MAILROOM_LOG_LEVEL, this.name),
      ),
      worker: workerOptions,
      webhooks,
      ...(allowHosts.length > 0 ? { fetch: { allowHosts } } : {}),
      ...(publicUrl
        ? { unsubscribe: { baseUrl: publicUrl, ...(unsubscribeSecret ? { secret: unsubscribeSecret } : {}) } }
        : {}),
      ...(publicUrl && (tracking.opens || tracking.clicks)
        ? { tracking: { baseUrl: publicUrl, ...tracking } }
        : {}),
      ...(bounces ? { bounces } : {}),
      domains,
      ...(destinations ? { destinations } : {}),
      strictVariables: args.flag('strict-variables'),
      noGuard: args.flag('no-guard'),
    });
    mailroom.worker.start();
    const where = describeDelivery(delivery);
    const fetches = allowHosts.length > 0 ? `, fetches also from ${allowHosts.join(', ')}` : '';
    println(
      io.stdout,
      `Mailroom worker running (database ${database.label}, delivery ${where}, concurrency ${workerOptions.concurrency ?? WORKER_DEFAULTS.concurrency}, ${threadsLabel(resolveRenderThreads(workerOptions.renderThreads))}${fetches})`,
    );
    await runUntilShutdown(io, async () => {
      println(io.stderr, 'mailroom: stopping the worker (finishing sends in flight)...');
      await mailroom.worker.stop();
      await mailroom.close();
      println(io.stderr, 'mailroom: stopped');
    });
    return EXIT_OK;
  },
};
