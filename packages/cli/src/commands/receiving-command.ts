import type { InboundMail, ReceivingDestination, ReceivingRouteView } from '@mailroom/core';
import { withAdmin } from '../admin/admin-target.js';
import { DATABASE_FLAG, JSON_FLAG } from '../flags/args.js';
import { EXIT_OK, UsageError } from '../output/cli-errors.js';
import { println } from '../output/io.js';
import { printJson } from '../output/output.js';
import type { Command } from './command.js';
import { inboundSettingsCommand } from './inbound-settings-command.js';

const FLAGS = { ...DATABASE_FLAG, ...JSON_FLAG, project: { type: 'string' } } as const;
const COMMON_HELP = `  --project ID       the project (mailroom project list shows the ids)
  --database URL     database (default: MAILROOM_DATABASE_URL, else ./mailroom.db)
  --json             print the answer as JSON`;

/** `mailroom route list`: the project's receiving routes. */
export const routeListCommand: Command = {
  name: 'route list',
  summary: "List a project's receiving routes (mail taken for the app)",
  help: `Usage: mailroom route list --project ID [--database URL|FILE] [--json]

Options:
${COMMON_HELP}`,
  flags: FLAGS,
  positionals: { min: 0, max: 0, names: '' },
  async run(args, io) {
    const routes = await withAdmin(args, io, (admin) => admin.receiving.listRoutes());
    if (args.flag('json')) {
      printJson(io, routes);
      return EXIT_OK;
    }
    if (routes.length === 0) println(io.stdout, 'No receiving routes: mailroom route add DOMAIN PATTERN');
    for (const r of routes) println(io.stdout, routeLine(r));
    return EXIT_OK;
  },
};

/** `mailroom route add DOMAIN PATTERN --webhook ID | --handler | --store`. */
export const routeAddCommand: Command = {
  name: 'route add',
  summary: 'Add a receiving route: mail to PATTERN@DOMAIN handed to a webhook, the app or the store',
  help: `Usage: mailroom route add --project ID DOMAIN PATTERN (--webhook ENDPOINT | --handler | --store)
                         [--database URL|FILE] [--json]

DOMAIN is a receiving domain whose MX points at Mailroom's listener (docs/inbound-routes.md
lists the DNS records). PATTERN is a local part (support), a prefix with a wildcard (reply+*)
or * (the domain's catch-all). An address another route (of any project) takes is refused.

Options:
  --webhook ENDPOINT an email.received event is POSTed to this webhook endpoint only (wh_...)
  --handler          the app's in-process onInbound handler gets it
  --store            kept in the store only (the default), for the API and the dashboard
${COMMON_HELP}`,
  flags: { ...FLAGS, webhook: { type: 'string' }, handler: { type: 'boolean' }, store: { type: 'boolean' } },
  positionals: { min: 2, max: 2, names: 'DOMAIN and PATTERN' },
  async run(args, io) {
    const [domain = '', pattern = ''] = args.positionals;
    const webhook = args.string('webhook');
    const chosen = [webhook !== undefined, args.flag('handler'), args.flag('store')].filter(Boolean).length;
    if (chosen > 1) throw new UsageError(`${args.command}: give one of --webhook, --handler or --store`);
    const destination: ReceivingDestination =
      webhook !== undefined
        ? { kind: 'webhook', endpointId: webhook }
        : args.flag('handler')
          ? { kind: 'handler' }
          : { kind: 'store' };
    const route = await withAdmin(args, io, (admin) =>
      admin.receiving.addRoute({ domain, pattern, destination }),
    );
    if (args.flag('json')) {
      printJson(io, route);
      return EXIT_OK;
    }
    println(
      io.stdout,
      `Added route ${route.id}: ${route.pattern}@${route.domain} -> ${destinationText(route.destination)}`,
    );
    return EXIT_OK;
  },
};

/** `mailroom route remove ID`. */
export const routeRemoveCommand: Command = {
  name: 'route remove',
  summary: 'Remove a receiving route (the messages it took stay)',
  help: `Usage: mailroom route remove --project ID ROUTE [--database URL|FILE] [--json]

Options:
${COMMON_HELP}`,
  flags: FLAGS,
  positionals: { min: 1, max: 1, names: 'the ROUTE id' },
  async run(args, io) {
    const id = args.positionals[0] ?? '';
    await withAdmin(args, io, (admin) => admin.receiving.removeRoute(id));
    if (args.flag('json')) printJson(io, { removed: id });
    else println(io.stdout, `Removed route ${id}; mail to its address is refused from now on.`);
    return EXIT_OK;
  },
};

/** `mailroom inbound list`: received messages, newest first. */
export const inboundListCommand: Command = {
  name: 'inbound list',
  summary: "List a project's received messages, newest first",
  help: `Usage: mailroom inbound list --project ID [--limit N] [--before MESSAGE] [--database URL|FILE] [--json]

Each line: the id, when, the sender, the subject, SPF/DKIM/DMARC results, and the message it
replies to (a delivery Mailroom sent), if any.

Options:
  --limit N          at most N messages (1 to 100; default 50)
  --before MESSAGE   the page after this message id (the last line of the previous page)
${COMMON_HELP}`,
  flags: { ...FLAGS, limit: { type: 'string' }, before: { type: 'string' } },
  positionals: { min: 0, max: 0, names: '' },
  async run(args, io) {
    const limit = args.int('limit', { min: 1, max: 100 });
    const before = args.string('before');
    const page = await withAdmin(args, io, (admin) =>
      admin.receiving.listMessages({ ...(limit ? { limit } : {}), ...(before ? { before } : {}) }),
    );
    if (args.flag('json')) {
      printJson(io, page);
      return EXIT_OK;
    }
    if (page.items.length === 0) println(io.stdout, 'No received messages.');
    for (const m of page.items) {
      const replied = m.replied_to ? `\treply to ${m.replied_to.mailing.ref} (${m.replied_to.address})` : '';
      println(
        io.stdout,
        `${m.id}\t${m.received_at}\t${m.from?.address ?? m.envelope.from}\t${oneLine(m.subject ?? '(no subject)')}\t${authText(m)}${replied}`,
      );
    }
    if (page.next) println(io.stdout, `More: mailroom inbound list --before ${page.next}`);
    return EXIT_OK;
  },
};

/** `mailroom inbound show ID`: one received message's parsed fields. */
export const inboundShowCommand: Command = {
  name: 'inbound show',
  summary: 'Show a received message: parsed fields, authentication, reply link, text',
  help: `Usage: mailroom inbound show --project ID MESSAGE [--public-url URL] [--database URL|FILE] [--json]

Each attachment is listed with its name, type, size and URL: a signed link that downloads it
without a key (GET /inbound/attachments/TOKEN), working for 7 days from now.

Options:
  --public-url URL   where the server that holds the database is reached (default:
                     MAILROOM_PUBLIC_URL): the base of the attachment URLs; without it no URL
                     is shown. Remotely the server's own public URL is used.
${COMMON_HELP}`,
  flags: { ...FLAGS, 'public-url': { type: 'string' } },
  positionals: { min: 1, max: 1, names: 'the MESSAGE id' },
  async run(args, io) {
    const id = args.positionals[0] ?? '';
    const m = await withAdmin(args, io, (admin) => admin.receiving.getMessage(id), ['public-url']);
    if (args.flag('json')) {
      printJson(io, m);
      return EXIT_OK;
    }
    const who = (list: InboundMail['to']) =>
      list.map((a) => (a.name ? `${a.name} <${a.address}>` : a.address)).join(', ');
    const lines = [
      `Id:          ${m.id}`,
      `Received:    ${m.received_at} from ${m.envelope.remote_address}`,
      `Envelope:    ${m.envelope.from || '<>'} -> ${m.envelope.to.join(', ')}`,
      `From:        ${m.from ? who([m.from]) : ''}`,
      `To:          ${who(m.to)}`,
      ...(m.cc.length > 0 ? [`Cc:          ${who(m.cc)}`] : []),
      ...(m.reply_to.length > 0 ? [`Reply-To:    ${who(m.reply_to)}`] : []),
      `Subject:     ${oneLine(m.subject ?? '')}`,
      `Date:        ${m.date ?? ''}`,
      `Message-ID:  ${m.message_id ?? ''}`,
      `Auth:        ${authText(m)}`,
      `Spam:        ${m.spam ? `${m.spam.spam ? 'spam' : 'not spam'}${m.spam.score === undefined ? '' : ` (score ${m.spam.score})`}` : 'no verdict'}`,
      `Reply to:    ${m.replied_to ? `${m.replied_to.mailing.kind} ${m.replied_to.mailing.ref}, delivery to ${m.replied_to.address}` : '-'}`,
      `Attachments: ${m.attachments.length === 0 ? '-' : m.attachments.length}`,
      ...m.attachments.map(
        (a) =>
          `  ${oneLine(a.filename ?? '(no name)')}\t${oneLine(a.content_type)}\t${a.size} bytes\t${a.url ?? 'no URL: give --public-url (or MAILROOM_PUBLIC_URL)'}`,
      ),
      '',
      printable(m.stripped_text ?? m.text ?? '(no text part)'),
    ];
    for (const line of lines) println(io.stdout, line);
    return EXIT_OK;
  },
};

/** Every receiving command, in the order `mailroom --help` lists them. */
export const RECEIVING_COMMANDS: readonly Command[] = [
  routeListCommand,
  routeAddCommand,
  routeRemoveCommand,
  inboundListCommand,
  inboundShowCommand,
  inboundSettingsCommand,
];

function routeLine(r: ReceivingRouteView): string {
  return `${r.id}\t${r.pattern}@${r.domain}\t${destinationText(r.destination)}\t${r.created_at}`;
}

function destinationText(d: ReceivingDestination): string {
  return d.kind === 'webhook' ? `webhook ${d.endpointId}` : d.kind === 'handler' ? 'handler' : 'store';
}

function authText(m: InboundMail): string {
  return `spf=${m.auth.spf} dkim=${m.auth.dkim} dmarc=${m.auth.dmarc}`;
}

/** A body for the terminal: lines and tabs kept, other control characters (escape sequences) not. */
function printable(text: string): string {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: removing them is the point
  return text.replace(/[\u0000-\u0008\u000b-\u001f\u007f]/g, ' ');
}

/** A header value on one line: a subject may carry control characters meant for a terminal. */
function oneLine(text: string): string {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: removing them is the point
  return text.replace(/[\u0000-\u001f\u007f]/g, ' ');
}
