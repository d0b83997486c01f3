import {
  bouncesOf,
  INBOUND_FLAGS,
  INBOUND_FLAGS_HELP,
  inboundListenOf,
  startInbound,
} from '../flags/inbound-flags.js';
import { EXIT_OK, UsageError } from '../output/cli-errors.js';
import { println } from '../output/io.js';
import { logLevelOf } from '../output/log-level.js';
import { openEngine, resolveDatabase } from '../server/open-engine.js';
import { runUntilShutdown } from '../server/shutdown.js';
import type { Command } from './command.js';

/** `mailroom inbound`: the inbound SMTP listener alone (bounces and complaints), without HTTP or worker. */
export const inboundCommand: Command = {
  name: 'inbound',
  localOnly: "runs the inbound SMTP server on the database's machine",
  summary: 'Run the inbound SMTP listener for bounces and complaints only',
  help: `Usage: mailroom inbound --port P --bounce-domain DOMAIN [--database URL|FILE]
                        [--inbound-host HOST] [--inbound-rate N]
                        [--inbound-trusted-relay CIDR]... [--tls-key FILE --tls-cert FILE]

Takes the DSNs, ARF complaint reports and replies mailed to b+TOKEN@DOMAIN (the
envelope sender of every message sent with --bounce-domain DOMAIN) and applies
them to the database, by the bounce's reason: an address that does not exist
is suppressed, a full mailbox counts towards the soft-bounce limit, a refusal
of the sender (DMARC, a blocklist, a rate limit) never suppresses; complaints
mark the delivery complained and unsubscribe the address; auto-replies change
nothing. Every recipient outside DOMAIN is refused at RCPT. Use the same
database, bounce domain and MAILROOM_BOUNCE_SECRET (if set) as the senders.

Options:
  --port P           port of the SMTP listener (default: 25)
  --bounce-domain DOMAIN
                     the domain it takes mail for (default: MAILROOM_BOUNCE_DOMAIN)
  --database URL     SQLite file, sqlite:FILE, postgres://... or mysql://...
                     (default: MAILROOM_DATABASE_URL, else ./mailroom.db)
${INBOUND_FLAGS_HELP}
  --log-level LEVEL  debug, info, warn, error or silent (default: MAILROOM_LOG_LEVEL, else info)`,
  flags: {
    ...INBOUND_FLAGS,
    port: { type: 'string' },
    'bounce-domain': { type: 'string' },
    database: { type: 'string' },
    'log-level': { type: 'string' },
  },
  positionals: { min: 0, max: 0, names: '' },
  async run(args, io) {
    const bounces = bouncesOf(args, io.env, this.name);
    if (!bounces) throw new UsageError('--bounce-domain DOMAIN is required', this.name);
    const listen = await inboundListenOf(args, args.int('port', { min: 0, max: 65535 }) ?? 25, this.name);
    // pino, loaded when the listener makes its logger (the command list and --help start without it).
    const { cliLogger } = await import('../output/cli-logger.js');
    const logger = cliLogger(
      io.stderr,
      logLevelOf(args.string('log-level'), io.env.MAILROOM_LOG_LEVEL, this.name),
    );
    const database = resolveDatabase(args.string('database'), io, this.name);
    // Attachment links of received mail point at the HTTP server that serves them (`serve`'s public URL).
    const publicUrl = io.env.MAILROOM_PUBLIC_URL?.trim();
    const { mailroom } = await openEngine({
      database,
      logger,
      bounces,
      ...(publicUrl ? { receiving: { baseUrl: publicUrl } } : {}),
    });
    let server: Awaited<ReturnType<typeof startInbound>>;
    try {
      server = await startInbound(mailroom.inbound, listen, logger, mailroom.receiving);
    } catch (error) {
      await mailroom.close();
      throw error;
    }
    println(
      io.stdout,
      `Mailroom inbound SMTP listening on ${server.host}:${server.port} for b+TOKEN@${bounces.domain.toLowerCase()} (database ${database.label})`,
    );
    await runUntilShutdown(io, async () => {
      println(io.stderr, 'mailroom: stopping the inbound listener...');
      await server.close();
      await mailroom.close();
      println(io.stderr, 'mailroom: stopped');
    });
    return EXIT_OK;
  },
};
