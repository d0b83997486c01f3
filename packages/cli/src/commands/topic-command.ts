import type { TopicDefault, TopicPatch, TopicState, TopicView } from '@mailroom/core';
import type { AdminOperations } from '../admin/admin-operations.js';
import { withAdmin } from '../admin/admin-target.js';
import { DATABASE_FLAG, JSON_FLAG, type ParsedArgs } from '../flags/args.js';
import { EXIT_OK, UsageError } from '../output/cli-errors.js';
import { type CliIo, println } from '../output/io.js';
import { printJson } from '../output/output.js';
import type { Command } from './command.js';

const FLAGS = { ...DATABASE_FLAG, ...JSON_FLAG, project: { type: 'string' } } as const;
const TOPIC_FLAGS = {
  ...FLAGS,
  name: { type: 'string' },
  description: { type: 'string' },
  default: { type: 'string' },
  visibility: { type: 'string' },
  'double-opt-in': { type: 'string' },
} as const;
const COMMON_HELP = `  --project ID       the project (mailroom project list shows the ids)
  --database URL     database (default: MAILROOM_DATABASE_URL, else ./mailroom.db)
  --json             print the answer as JSON`;
const TOPIC_HELP = `  --name TEXT        shown to contacts
  --description TEXT
  --default MODE     opt-in (contacts get it once they subscribe; the default) or opt-out
  --visibility V     public (shown to contacts; the default) or private
  --double-opt-in on|off  form signups stay pending until confirmed from a mailed link`;

/** `mailroom topics`: the project's topics. */
export const topicListCommand: Command = {
  name: 'topics',
  summary: "List the project's topics (what contacts may choose to receive)",
  help: `Usage: mailroom topics --project ID [--database URL|FILE] [--json]

Options:
${COMMON_HELP}`,
  flags: FLAGS,
  positionals: { min: 0, max: 0, names: '' },
  run: async (args, io) => printTopics(args, io, await withAdmin(args, io, (admin) => admin.topics.list())),
};

/** `mailroom topic create KEY --name TEXT`. */
export const topicCreateCommand: Command = {
  name: 'topic create',
  summary: 'Create a topic: a key, a name, a default (opt-in or opt-out) and a visibility',
  help: `Usage: mailroom topic create --project ID KEY --name TEXT [--description TEXT]
                           [--default opt-in|opt-out] [--visibility public|private]
                           [--double-opt-in on|off] [--json]

KEY is 1 to 64 of a-z 0-9 . _ -. A broadcast names it in options.topic.

Options:
${TOPIC_HELP}
${COMMON_HELP}`,
  flags: TOPIC_FLAGS,
  positionals: { min: 1, max: 1, names: 'the topic KEY' },
  run: async (args, io) => {
    const key = args.positionals[0] ?? '';
    const patch = patchOf(args);
    const topic = await withAdmin(args, io, (admin) =>
      admin.topics.create({ key, name: args.required('name'), ...patch }),
    );
    return printTopics(args, io, [topic], `Created topic ${topic.key}.`);
  },
};

/** `mailroom topic update KEY [--name ...]`. */
export const topicUpdateCommand: Command = {
  name: 'topic update',
  summary: "Change a topic's name, description, default or visibility",
  help: `Usage: mailroom topic update --project ID KEY [--name TEXT] [--description TEXT]
                           [--default opt-in|opt-out] [--visibility public|private]
                           [--double-opt-in on|off] [--json]

Options:
${TOPIC_HELP}
${COMMON_HELP}`,
  flags: TOPIC_FLAGS,
  positionals: { min: 1, max: 1, names: 'the topic KEY' },
  run: async (args, io) => {
    const key = args.positionals[0] ?? '';
    const name = args.string('name');
    const topic = await withAdmin(args, io, (admin) =>
      admin.topics.update(key, { ...patchOf(args), ...(name !== undefined ? { name } : {}) }),
    );
    return printTopics(args, io, [topic], `Updated topic ${topic.key}.`);
  },
};

/** `mailroom topic delete KEY`. */
export const topicDeleteCommand: Command = {
  name: 'topic delete',
  summary: "Delete a topic and the contacts' choices for it (their consent history stays)",
  help: `Usage: mailroom topic delete --project ID KEY [--database URL|FILE]

Options:
${COMMON_HELP}`,
  flags: FLAGS,
  positionals: { min: 1, max: 1, names: 'the topic KEY' },
  run: async (args, io) => {
    const key = args.positionals[0] ?? '';
    await withAdmin(args, io, (admin) => admin.topics.remove(key));
    println(io.stdout, `Deleted topic ${key}.`);
    return EXIT_OK;
  },
};

/** `mailroom contact topics ADDRESS [--set news=unsubscribed,offers=default]`. */
export const contactTopicsCommand: Command = {
  name: 'contact topics',
  summary: "Show (or set with --set) a contact's state for every topic",
  help: `Usage: mailroom contact topics --project ID ADDRESS [--set KEY=STATE,...] [--json]

Without --set, lists every topic with the contact's state (its choice, or the topic's
default). --set takes KEY=subscribed, KEY=unsubscribed or KEY=default (clears the choice),
comma-separated; each change is kept in the contact's consent history (source api).

Options:
  --set LIST         the states to set
${COMMON_HELP}`,
  flags: { ...FLAGS, set: { type: 'string' } },
  positionals: { min: 1, max: 1, names: 'the contact ADDRESS' },
  run: async (args, io) => {
    const address = args.positionals[0] ?? '';
    const set = args.string('set');
    const topics = await withAdmin(args, io, (admin: AdminOperations) =>
      set === undefined
        ? admin.topics.ofContact(address)
        : admin.topics.setForContact(address, statesOf(set)),
    );
    if (args.flag('json')) {
      printJson(io, topics);
      return EXIT_OK;
    }
    if (topics.length === 0) println(io.stdout, 'The project has no topics.');
    for (const t of topics) {
      println(io.stdout, `${t.key}\t${t.state}${t.explicit ? '' : ' (default)'}\t${t.visibility}\t${t.name}`);
    }
    return EXIT_OK;
  },
};

/** `mailroom contact consent ADDRESS`: the consent history. */
export const contactConsentCommand: Command = {
  name: 'contact consent',
  summary: "Show a contact's consent history: every change, its source, time, IP and user agent",
  help: `Usage: mailroom contact consent --project ID ADDRESS [--limit N] [--after CURSOR] [--json]

Options:
  --limit N          at most N records (1 to 500; default 100)
  --after CURSOR     the page after this record id
${COMMON_HELP}`,
  flags: { ...FLAGS, limit: { type: 'string' }, after: { type: 'string' } },
  positionals: { min: 1, max: 1, names: 'the contact ADDRESS' },
  run: async (args, io) => {
    const address = args.positionals[0] ?? '';
    const limit = args.int('limit', { min: 1, max: 500 });
    const after = args.string('after');
    const page = await withAdmin(args, io, (admin) =>
      admin.topics.history(address, { ...(limit ? { limit } : {}), ...(after ? { after } : {}) }),
    );
    if (args.flag('json')) {
      printJson(io, page);
      return EXIT_OK;
    }
    if (page.data.length === 0) println(io.stdout, 'No consent change recorded.');
    for (const r of page.data) {
      const what = r.topic ? `${r.change} ${r.topic}=${r.state ?? 'default'}` : `${r.change}`;
      const from = [r.source, r.ip, r.userAgent, r.mailingRef].filter((x) => x).join(' ');
      println(io.stdout, `${r.at.toISOString()}\t${what}\t${from}`);
    }
    if (page.next) println(io.stdout, `More: --after ${page.next}`);
    return EXIT_OK;
  },
};

/** Every topic command, in the order `mailroom --help` lists them. */
export const TOPIC_COMMANDS: readonly Command[] = [
  topicListCommand,
  topicCreateCommand,
  topicUpdateCommand,
  topicDeleteCommand,
  contactTopicsCommand,
  contactConsentCommand,
];

function patchOf(args: ParsedArgs): Omit<TopicPatch, 'name'> {
  const description = args.string('description');
  const mode = args.string('default');
  const visibility = args.string('visibility');
  if (mode !== undefined && mode !== 'opt-in' && mode !== 'opt-out') {
    throw new UsageError(`${args.command}: --default is opt-in or opt-out`);
  }
  if (visibility !== undefined && visibility !== 'public' && visibility !== 'private') {
    throw new UsageError(`${args.command}: --visibility is public or private`);
  }
  const doubleOptIn = args.string('double-opt-in');
  if (doubleOptIn !== undefined && doubleOptIn !== 'on' && doubleOptIn !== 'off') {
    throw new UsageError(`${args.command}: --double-opt-in is on or off`);
  }
  return {
    ...(description !== undefined ? { description } : {}),
    ...(mode !== undefined ? { default: mode as TopicDefault } : {}),
    ...(visibility !== undefined ? { visibility } : {}),
    ...(doubleOptIn !== undefined ? { doubleOptIn: doubleOptIn === 'on' } : {}),
  };
}

function statesOf(list: string): Record<string, TopicState | null> {
  const out: Record<string, TopicState | null> = {};
  for (const part of list
    .split(',')
    .map((p) => p.trim())
    .filter((p) => p !== '')) {
    const [key, state] = part.split('=').map((s) => s.trim());
    if (!key || (state !== 'subscribed' && state !== 'unsubscribed' && state !== 'default')) {
      throw new UsageError(`contact topics: --set takes KEY=subscribed|unsubscribed|default, not ${part}`);
    }
    out[key] = state === 'default' ? null : state;
  }
  return out;
}

function printTopics(args: ParsedArgs, io: CliIo, topics: TopicView[], done?: string): number {
  if (args.flag('json')) {
    printJson(io, done ? topics[0] : topics);
    return EXIT_OK;
  }
  if (done) println(io.stdout, done);
  else if (topics.length === 0) println(io.stdout, 'No topics yet: mailroom topic create KEY --name TEXT');
  for (const t of topics) {
    println(
      io.stdout,
      `${t.key}\t${t.default}${t.doubleOptIn ? ' double-opt-in' : ''}\t${t.visibility}\t${t.name}`,
    );
  }
  return EXIT_OK;
}
