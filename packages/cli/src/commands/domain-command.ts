import {
  checkDomain,
  createDnsResolver,
  type DkimAlgorithm,
  type DkimExpectation,
  type DnsRecordToPublish,
  type DomainCheck,
  type DomainFinding,
  type DomainView,
  MailroomError,
  normalizeDomain,
} from '@mailroom/core';
import type { AdminOperations } from '../admin/admin-operations.js';
import { adminTargetOf, withAdmin } from '../admin/admin-target.js';
import { DATABASE_FLAG, JSON_FLAG, type ParsedArgs } from '../flags/args.js';
import { DNS_FLAGS, DNS_FLAGS_HELP, dnsServersOf, relayOf } from '../flags/domain-flags.js';
import { EXIT_FAILURE, EXIT_OK, UsageError } from '../output/cli-errors.js';
import { type CliIo, println } from '../output/io.js';
import { printJson } from '../output/output.js';
import type { Command } from './command.js';

const PROJECT_FLAG = { project: { type: 'string' } } as const;
const KEY_FLAGS = { selector: { type: 'string' }, 'key-type': { type: 'string' } } as const;

/**
 * The flags that set this process's DNS and relay: remotely the server checks domains and advises
 * records with its own, so they are refused with --url (`domain check` runs its checks here and keeps them).
 */
const SERVER_SETTINGS = Object.keys(DNS_FLAGS);

/** A command to run next on the same project, reached as `admin` reaches it. */
function followUp(admin: AdminOperations, command: string, name: string): string {
  return admin.remote
    ? `mailroom ${admin.target} ${command} ${name}`
    : `mailroom ${command} ${admin.target} ${name}`;
}

const DATABASE_HELP = `  --database URL     database (default: MAILROOM_DATABASE_URL, else ./mailroom.db)`;
const SECRET_HELP = `Private keys are sealed with MAILROOM_DKIM_SECRET when it is set (every process
that adds, checks or signs needs the same one), else with a secret kept in the database.`;

/** The domain NAME argument, normalised; a malformed one is a usage error naming the problem. */
function domainArg(args: ParsedArgs): string {
  try {
    return normalizeDomain(args.positionals[0] ?? '');
  } catch (error) {
    if (error instanceof MailroomError && error.code === 'VALIDATION_FAILED') {
      throw new UsageError(error.message, args.command);
    }
    throw error;
  }
}

/** `--key-type`, checked. */
function keyTypeOf(args: ParsedArgs): DkimAlgorithm | undefined {
  const given = args.string('key-type');
  if (given === undefined) return undefined;
  if (given !== 'rsa' && given !== 'ed25519') {
    throw new UsageError(`--key-type must be rsa or ed25519, got '${given}'`, args.command);
  }
  return given;
}

/** `mailroom domain add --project ID NAME`: the key made, the records to publish printed. */
export const domainAddCommand: Command = {
  name: 'domain add',
  summary: 'Add a sending domain: a DKIM key is made, and the DNS records to publish are printed',
  help: `Usage: mailroom domain add --project ID NAME [--selector S] [--key-type rsa|ed25519]
                          [--return-path DOMAIN [--return-path-mx HOST]] [--dmarc-reports ADDRESS]
                          [--relay-ip IP]... [--relay-spf MECHANISM]... [--database URL|FILE] [--json]

Adds NAME (acme.com) as a sending domain of the project: makes its DKIM key (RSA 2048,
or Ed25519), keeps the private key sealed in the database (never printed), and prints
the DNS records to publish. Then run mailroom domain verify. Mail from a verified domain
is signed with its key without further configuration.

Options:
  --project ID       the project (mailroom project list shows the ids)
  --selector S       the DKIM selector (default: mr and the date, mr20260829)
  --key-type TYPE    rsa (default) or ed25519
  --return-path D    the return-path (bounce) domain of its mail, bounces.acme.com with
                     --bounce-domain on serve: its SPF (and MX) are published and checked
  --return-path-mx HOST
                     the host its MX must name (the inbound SMTP server)
  --dmarc-reports ADDRESS
                     where DMARC reports go (default: dmarc@NAME)
${DNS_FLAGS_HELP}
${DATABASE_HELP}
  --json             print the domain as JSON

${SECRET_HELP}`,
  flags: {
    ...DATABASE_FLAG,
    ...JSON_FLAG,
    ...PROJECT_FLAG,
    ...KEY_FLAGS,
    ...DNS_FLAGS,
    'return-path': { type: 'string' },
    'return-path-mx': { type: 'string' },
    'dmarc-reports': { type: 'string' },
  },
  positionals: { min: 1, max: 1, names: 'the domain NAME' },
  async run(args, io) {
    const name = domainArg(args);
    const keyType = keyTypeOf(args);
    const options = {
      ...(keyType ? { keyType } : {}),
      ...optional('selector', args.string('selector')),
      ...optional('returnPath', args.string('return-path')),
      ...optional('returnPathMx', args.string('return-path-mx')),
      ...optional('dmarcReports', args.string('dmarc-reports')),
    };
    const { added, admin } = await withAdmin(
      args,
      io,
      async (admin) => ({ added: await admin.domains.add(name, options), admin }),
      SERVER_SETTINGS,
    );
    if (args.flag('json')) {
      printJson(io, added);
      return EXIT_OK;
    }
    println(io.stdout, `Added ${added.domain} (pending). Publish these DNS records:`);
    printRecords(io, added.records);
    println(io.stdout);
    println(io.stdout, `Then run: ${followUp(admin, 'domain verify', added.domain)}`);
    return EXIT_OK;
  },
};

/** `mailroom domain list --project ID`. */
export const domainListCommand: Command = {
  name: 'domain list',
  summary: "List a project's sending domains and their state",
  help: `Usage: mailroom domain list --project ID [--relay-ip IP]... [--relay-spf MECHANISM]...
                           [--database URL|FILE] [--json]

Lists the project's sending domains: state (pending, verified, failed), the selector
mail is signed with, and when each was last checked; --json adds their records.

Options:
  --project ID       the project (mailroom project list shows the ids)
${DNS_FLAGS_HELP}
${DATABASE_HELP}
  --json             print the domains, with their records and findings, as JSON`,
  flags: { ...DATABASE_FLAG, ...JSON_FLAG, ...PROJECT_FLAG, ...DNS_FLAGS },
  positionals: { min: 0, max: 0, names: '' },
  async run(args, io) {
    const domains = await withAdmin(args, io, (admin) => admin.domains.list(), SERVER_SETTINGS);
    if (args.flag('json')) {
      printJson(io, domains);
      return EXIT_OK;
    }
    if (domains.length === 0) println(io.stdout, 'No sending domains.');
    for (const d of domains) {
      const signing = d.signingSelector ? `signs with ${d.signingSelector}` : 'no key in use yet';
      const checked = d.checkedAt ? `checked ${d.checkedAt.toISOString()}` : 'never checked';
      println(io.stdout, `${d.domain}  ${d.state}  ${signing}  ${checked}`);
    }
    return EXIT_OK;
  },
};

/** `mailroom domain verify --project ID NAME`: checks now and writes the outcome; exit 1 unless verified. */
export const domainVerifyCommand: Command = {
  name: 'domain verify',
  summary: 'Check a sending domain through DNS now (exit 1 unless it is verified)',
  help: `Usage: mailroom domain verify --project ID NAME [--dns-server HOST:PORT]...
                             [--relay-ip IP]... [--relay-spf MECHANISM]... [--database URL|FILE] [--json]

Looks the domain's records up through DNS and says of each: found, missing, wrong (with
the exact value to publish) or no-answer (DNS did not answer: never "verified"). The
outcome is kept: a key whose record is seen signs the domain's mail from then on. Exits 0
when the domain is verified, 1 otherwise.

Options:
  --project ID       the project (mailroom project list shows the ids)
${DNS_FLAGS_HELP}
${DATABASE_HELP}
  --json             print the domain, with its findings, as JSON`,
  flags: { ...DATABASE_FLAG, ...JSON_FLAG, ...PROJECT_FLAG, ...DNS_FLAGS },
  positionals: { min: 1, max: 1, names: 'the domain NAME' },
  async run(args, io) {
    const name = domainArg(args);
    const checked = await withAdmin(args, io, (admin) => admin.domains.verify(name), SERVER_SETTINGS);
    if (args.flag('json')) printJson(io, checked);
    else {
      println(
        io.stdout,
        `${checked.domain}: ${checked.state}${checked.check === 'no-answer' ? ' (DNS did not answer)' : ''}`,
      );
      printFindings(io, checked.findings ?? []);
      if (checked.signingSelector)
        println(io.stdout, `Mail from ${checked.domain} is signed with ${checked.signingSelector}.`);
    }
    return checked.check === 'verified' ? EXIT_OK : EXIT_FAILURE;
  },
};

/** `mailroom domain rotate-dkim --project ID NAME`: a new key, its record printed. */
export const domainRotateCommand: Command = {
  name: 'domain rotate-dkim',
  summary: 'Start a DKIM key rotation: a new key and selector, used once its record is seen',
  help: `Usage: mailroom domain rotate-dkim --project ID NAME [--selector S] [--key-type rsa|ed25519]
                                  [--relay-ip IP]... [--database URL|FILE] [--json]

Makes a new DKIM key with a new selector and prints its record. Publish it next to the
current one and run mailroom domain verify: mail is then signed with the new key, and the
old key stays valid for the grace period (7 days), its record to be kept until then.

Options:
  --project ID       the project (mailroom project list shows the ids)
  --selector S       the new selector (default: mr and the date)
  --key-type TYPE    rsa or ed25519 (default: the current key's)
${DNS_FLAGS_HELP}
${DATABASE_HELP}
  --json             print the domain as JSON

${SECRET_HELP}`,
  flags: { ...DATABASE_FLAG, ...JSON_FLAG, ...PROJECT_FLAG, ...KEY_FLAGS, ...DNS_FLAGS },
  positionals: { min: 1, max: 1, names: 'the domain NAME' },
  async run(args, io) {
    const name = domainArg(args);
    const keyType = keyTypeOf(args);
    const options = { ...(keyType ? { keyType } : {}), ...optional('selector', args.string('selector')) };
    const { rotated, admin } = await withAdmin(
      args,
      io,
      async (admin) => ({ rotated: await admin.domains.rotateDkim(name, options), admin }),
      SERVER_SETTINGS,
    );
    if (args.flag('json')) {
      printJson(io, rotated);
      return EXIT_OK;
    }
    const fresh = rotated.keys.find((k) => k.state === 'pending');
    println(
      io.stdout,
      `New key ${fresh?.selector ?? ''} for ${rotated.domain}. Publish its record (keep the current one):`,
    );
    if (fresh) printRecords(io, [fresh.record]);
    println(io.stdout);
    println(io.stdout, `Then run: ${followUp(admin, 'domain verify', rotated.domain)}`);
    return EXIT_OK;
  },
};

/** `mailroom domain check NAME`: the CI preflight; nothing is written. */
export const domainCheckCommand: Command = {
  name: 'domain check',
  summary: "Check a domain's DNS records without a database (the CI preflight; exit 1 unless verified)",
  help: `Usage: mailroom domain check NAME (--selector S... | --project ID [--database URL|FILE])
                            [--relay-ip IP]... [--relay-spf MECHANISM]...
                            [--return-path DOMAIN [--return-path-mx HOST]] [--dmarc-reports ADDRESS]
                            [--bimi] [--dns-server HOST:PORT]... [--json]

Checks through DNS that NAME publishes what its mail needs (the DKIM key of each selector,
SPF for the relay, DMARC under which such mail passes, the return path's MX and SPF) and
prints each record's finding: found, missing, wrong (with the value to publish) or
no-answer. Writes nothing. Exits 0 when the domain is verified, 1 otherwise: run it in
CI before a release. The same check is exported as checkDomain() by @mailroom/core.

Options:
  --selector S       a DKIM selector to look up (repeatable)
  --project ID       take the selectors, return path and DMARC address from the domain as
                     the project keeps it (mailroom domain add)
  --return-path D    the return-path (bounce) domain: its SPF and MX are checked
  --return-path-mx HOST
                     the host its MX must name
  --dmarc-reports ADDRESS
                     the DMARC reporting address (default: dmarc@NAME)
  --bimi             also look up the BIMI record (default._bimi.NAME)
${DNS_FLAGS_HELP}
${DATABASE_HELP}
  --json             print { domain, state, findings } as JSON`,
  flags: {
    ...DATABASE_FLAG,
    ...JSON_FLAG,
    ...PROJECT_FLAG,
    ...DNS_FLAGS,
    selector: { type: 'string', multiple: true },
    'return-path': { type: 'string' },
    'return-path-mx': { type: 'string' },
    'dmarc-reports': { type: 'string' },
    bimi: { type: 'boolean' },
  },
  positionals: { min: 1, max: 1, names: 'the domain NAME' },
  async run(args, io) {
    const name = domainArg(args);
    const selectors = args.list('selector');
    const projectId = args.string('project');
    if (selectors.length === 0 && projectId === undefined) {
      throw new UsageError('give --selector (the DKIM selector to look up) or --project', this.name);
    }
    const servers = dnsServersOf(args, io.env, this.name);
    const relay = relayOf(args, io.env, this.name);
    let plan: { dkim: DkimExpectation[]; returnPath?: string; returnPathMx?: string; dmarcReports?: string } =
      {
        dkim: selectors.map((selector) => ({ selector })),
      };
    let keptState: DomainView['state'] | undefined;
    if (projectId !== undefined || adminTargetOf(args, io.env).kind === 'remote') {
      // The DNS flags stay this process's: the check itself runs here, only the plan is read.
      const kept = await withAdmin(args, io, (admin) => admin.domains.get(name));
      plan = planOf(kept, plan.dkim);
      keptState = kept.state;
    }
    const returnPath = args.string('return-path') ?? plan.returnPath;
    const returnPathMx = args.string('return-path-mx') ?? plan.returnPathMx;
    if (returnPathMx !== undefined && returnPath === undefined) {
      throw new UsageError('--return-path-mx needs --return-path', this.name);
    }
    const dmarcReports = args.string('dmarc-reports') ?? plan.dmarcReports;
    const check = await checkDomain({
      domain: name,
      dkim: plan.dkim,
      resolver: createDnsResolver(servers.length > 0 ? { servers } : {}),
      ...(relay ? { relay } : {}),
      ...(returnPath
        ? { returnPath: { domain: returnPath, ...(returnPathMx ? { mx: returnPathMx } : {}) } }
        : {}),
      ...(dmarcReports ? { dmarcReports } : {}),
      ...(args.flag('bimi') ? { bimi: true } : {}),
    });
    if (args.flag('json')) printJson(io, check);
    else printCheck(io, check, keptState);
    return check.state === 'verified' ? EXIT_OK : EXIT_FAILURE;
  },
};

/** What a kept domain says to check: its keys still published (the given selectors added). */
function planOf(
  kept: DomainView,
  given: DkimExpectation[],
): { dkim: DkimExpectation[]; returnPath?: string; returnPathMx?: string; dmarcReports?: string } {
  const keys = kept.keys
    .filter((k) => k.state === 'active' || (k.state === 'pending' && kept.signingSelector === null))
    .map((k) => ({ selector: k.selector, algorithm: k.algorithm, publicKey: publicKeyOf(k.record.value) }));
  if (keys.length === 0 && given.length === 0) {
    throw new MailroomError('NOT_FOUND', `${kept.domain} has no key in use`);
  }
  return {
    dkim: [...keys, ...given.filter((g) => !keys.some((k) => k.selector === g.selector))],
    ...(kept.returnPath ? { returnPath: kept.returnPath } : {}),
    ...(kept.returnPathMx ? { returnPathMx: kept.returnPathMx } : {}),
    ...(kept.dmarcReports ? { dmarcReports: kept.dmarcReports } : {}),
  };
}

function publicKeyOf(value: string): string {
  return /(?:^|;)\s*p=([^;\s]*)/.exec(value)?.[1] ?? '';
}

function optional<K extends string>(key: K, value: string | undefined): Partial<Record<K, string>> {
  return value === undefined ? {} : ({ [key]: value } as Record<K, string>);
}

/** The records, each as `TYPE name` then its value, indented: ready to copy. */
function printRecords(io: CliIo, records: readonly DnsRecordToPublish[]): void {
  for (const record of records) {
    println(io.stdout);
    const priority = record.priority === undefined ? '' : ` (priority ${record.priority})`;
    println(io.stdout, `  ${record.type.padEnd(5)}${record.name}${priority}`);
    println(io.stdout, `      ${record.value}`);
    if (record.note) println(io.stdout, `      ${record.note}`);
  }
}

function printCheck(io: CliIo, check: DomainCheck, kept: DomainView['state'] | undefined): void {
  println(io.stdout, `${check.domain}: ${checkVerdict(check.state, kept)}`);
  printFindings(io, check.findings);
}

/**
 * The verdict of a check in the words `domain verify` uses for the same findings: a kept domain never
 * verified stays `pending` (a verified one becomes `failed`), as verify would write it; a name that is
 * not a kept domain is `not verified` (the JSON `state` stays the check's own: `failed`).
 */
function checkVerdict(state: DomainCheck['state'], kept: DomainView['state'] | undefined): string {
  if (state === 'verified') return 'verified';
  if (state === 'no-answer') return 'not verified (DNS did not answer)';
  const why = 'a required record is missing or wrong';
  if (kept === undefined) return `not verified (${why})`;
  return `${kept === 'pending' ? 'pending' : 'failed'} (${why})`;
}

/** One line per finding, with the problem and the value to publish under those not found. */
function printFindings(io: CliIo, findings: readonly DomainFinding[]): void {
  for (const f of findings) {
    const label = `${f.kind}${f.optional ? ' (optional)' : ''}`;
    println(io.stdout, `  ${f.state.padEnd(10)}${label.padEnd(28)}${f.type} ${f.name}`);
    if (f.state === 'found' && !f.problem) continue;
    if (f.problem) println(io.stdout, `            ${f.problem}`);
    if (f.expected && f.state !== 'found') println(io.stdout, `            publish: ${f.expected}`);
  }
}
