import { withAdmin } from '../admin/admin-target.js';
import { DATABASE_FLAG, JSON_FLAG } from '../flags/args.js';
import { allowHostsOf } from '../flags/engine-flags.js';
import { EXIT_OK } from '../output/cli-errors.js';
import { println } from '../output/io.js';
import { printJson } from '../output/output.js';
import type { Command } from './command.js';

const PROJECT_FLAG = { project: { type: 'string' } } as const;

/** `mailroom webhook add --project ID --url URL [--events a,b]`: prints the endpoint and its secret once. */
export const webhookAddCommand: Command = {
  name: 'webhook add',
  summary: 'Add a webhook endpoint (events are POSTed to it, signed)',
  help: `Usage: mailroom webhook add --project ID --url URL [--events TYPE,TYPE] [--allow-host HOST:PORT]...
                           [--database URL|FILE] [--json]

Adds an endpoint that receives the project's events (email.sent, email.failed, ...)
as Standard Webhooks requests, and prints its signing secret (whsec_...) once: verify
every request with it (the standardwebhooks or svix libraries).

Options:
  --project ID       the project (mailroom project list shows the ids)
  --url URL          where to POST; a private, loopback or metadata address is refused
                     unless allow-listed (the sender must allow it too: --allow-host on serve/worker)
  --events LIST      comma-separated event types it receives (default: all)
  --allow-host HOST:PORT
                     let this host through the address checks (repeatable; default: MAILROOM_ALLOW_HOSTS)
  --database URL     database (default: MAILROOM_DATABASE_URL, else ./mailroom.db)
  --json             print { webhook, secret } as JSON`,
  flags: {
    ...DATABASE_FLAG,
    ...JSON_FLAG,
    ...PROJECT_FLAG,
    url: { type: 'string' },
    events: { type: 'string' },
    'allow-host': { type: 'string', multiple: true },
  },
  positionals: { min: 0, max: 0, names: '' },
  async run(args, io) {
    const url = args.required('url');
    const events = args
      .string('events')
      ?.split(',')
      .map((t) => t.trim());
    const { added, remote } = await withAdmin(
      args,
      io,
      async (admin) => ({
        added: await admin.webhooks.add({ url, ...(events ? { events } : {}) }),
        remote: admin.remote,
      }),
      ['allow-host'],
    );
    if (args.flag('json')) {
      printJson(io, { webhook: added.endpoint, secret: added.secret });
      return EXIT_OK;
    }
    println(io.stdout, `Added webhook ${added.endpoint.id} -> ${added.endpoint.url}`);
    println(io.stdout, `Events: ${added.endpoint.events?.join(', ') ?? 'all'}`);
    println(io.stdout, `Signing secret (shown once, keep it): ${added.secret}`);
    const allowHosts = remote ? [] : allowHostsOf(args, io.env, args.command);
    if (allowHosts.length > 0) {
      // The check here was this process's; the events go out from serve or worker, which check again.
      const flags = allowHosts.map((host) => `--allow-host ${host}`).join(' ');
      println(
        io.stdout,
        `The process that sends the events must allow it too: mailroom serve ${flags} (or mailroom worker ${flags}, or MAILROOM_ALLOW_HOSTS).`,
      );
    }
    return EXIT_OK;
  },
};

/** `mailroom webhook list --project ID`. */
export const webhookListCommand: Command = {
  name: 'webhook list',
  summary: "List a project's webhook endpoints",
  help: `Usage: mailroom webhook list --project ID [--database URL|FILE] [--json]

Lists the project's webhook endpoints (never their secrets), with whether each is
enabled and why one was disabled.`,
  flags: { ...DATABASE_FLAG, ...JSON_FLAG, ...PROJECT_FLAG },
  positionals: { min: 0, max: 0, names: '' },
  async run(args, io) {
    const endpoints = await withAdmin(args, io, (admin) => admin.webhooks.list());
    if (args.flag('json')) {
      printJson(io, endpoints);
      return EXIT_OK;
    }
    if (endpoints.length === 0) println(io.stdout, 'No webhook endpoints.');
    for (const e of endpoints) {
      const state = e.enabled ? 'enabled' : `disabled (${e.disabledReason ?? 'by the user'})`;
      println(io.stdout, `${e.id}  ${e.url}  ${e.events?.join(',') ?? 'all events'}  ${state}`);
    }
    return EXIT_OK;
  },
};

/** `mailroom webhook remove --project ID WEBHOOK_ID`. */
export const webhookRemoveCommand: Command = {
  name: 'webhook remove',
  summary: 'Remove a webhook endpoint',
  help: `Usage: mailroom webhook remove --project ID WEBHOOK_ID [--database URL|FILE] [--json]

Removes the endpoint: nothing more is sent to it.`,
  flags: { ...DATABASE_FLAG, ...JSON_FLAG, ...PROJECT_FLAG },
  positionals: { min: 1, max: 1, names: 'the WEBHOOK_ID' },
  async run(args, io) {
    const id = args.positionals[0] ?? '';
    await withAdmin(args, io, (admin) => admin.webhooks.remove(id));
    if (args.flag('json')) printJson(io, { removed: id });
    else println(io.stdout, `Removed webhook ${id}.`);
    return EXIT_OK;
  },
};

/** `mailroom webhook enable|disable --project ID WEBHOOK_ID`: the same command, either way. */
function webhookSetEnabledCommand(enabled: boolean): Command {
  const verb = enabled ? 'enable' : 'disable';
  return {
    name: `webhook ${verb}`,
    summary: enabled
      ? 'Enable a webhook endpoint (also one disabled after failing for days)'
      : 'Disable a webhook endpoint (its events wait until it is enabled)',
    help: `Usage: mailroom webhook ${verb} --project ID WEBHOOK_ID [--database URL|FILE] [--json]

${
  enabled
    ? `Enables the endpoint. An endpoint the sender disabled after every attempt failed for
5 days is enabled again the same way, with its failure record cleared. Events written
while it was disabled are not sent to it (GET /events still lists them), and messages
that failed stay failed: replay them from the dashboard's Webhooks page.`
    : `Disables the endpoint: events written from now on are not sent to it, and its
messages still queued fail as "endpoint disabled".`
}`,
    flags: { ...DATABASE_FLAG, ...JSON_FLAG, ...PROJECT_FLAG },
    positionals: { min: 1, max: 1, names: 'the WEBHOOK_ID' },
    async run(args, io) {
      const id = args.positionals[0] ?? '';
      const view = await withAdmin(args, io, (admin) => admin.webhooks.setEnabled(id, enabled));
      if (args.flag('json')) printJson(io, view);
      else println(io.stdout, `${enabled ? 'Enabled' : 'Disabled'} webhook ${id} -> ${view.url}.`);
      return EXIT_OK;
    },
  };
}

/** `mailroom webhook enable --project ID WEBHOOK_ID`. */
export const webhookEnableCommand = webhookSetEnabledCommand(true);
/** `mailroom webhook disable --project ID WEBHOOK_ID`. */
export const webhookDisableCommand = webhookSetEnabledCommand(false);
