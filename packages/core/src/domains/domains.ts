import { isMailroomError, MailroomError } from '../base/errors.js';
import { newId } from '../base/ids.js';
import type { BaseContext } from '../context/base-context.js';
import { installationSecret } from '../context/installation-secret.js';
import type { DkimKeyRecord, DomainRecord } from '../store/domain-store.js';
import { checkSelector, type DkimAlgorithm, generateDkimKey, newSelector } from './dkim-key.js';
import { createDnsResolver } from './dns-lookup.js';
import { runDomainCheck } from './domain-check-run.js';
import { normalizeDomain } from './domain-name.js';
import { reportDomainOf, spfMechanisms } from './domain-records.js';
import { createDomainSchedule, type DomainSchedule } from './domain-schedule.js';
import { createDomainSigning, type DomainSigning } from './domain-signing.js';
import { domainView, signingKeyOf } from './domain-view.js';
import type {
  AddDomainOptions,
  DomainsOptions,
  DomainView,
  RotateDkimOptions,
  SendingPolicy,
} from './domains-options.js';
import { DKIM_SEALING_SECRET_SETTING, sealKey } from './sealed-key.js';
import { type WarmupOptions, warmupDay } from './warmup-schedule.js';

const DAY_MS = 86_400_000;
/** A new domain's first scheduled check: time to publish its records. */
const FIRST_CHECK_MS = 10 * 60_000;
const ALGORITHMS: readonly DkimAlgorithm[] = ['rsa', 'ed25519'];
const POLICIES: readonly SendingPolicy[] = ['warn', 'enforce'];

/** A project's sending domains: the admin operations, the scheduled checks, the signing side. Internal. */
export interface Domains {
  /** Add a domain: a DKIM key made and sealed, the records to publish. `CONFLICT` if it exists. */
  add(projectId: string, name: string, options?: AddDomainOptions): Promise<DomainView>;
  /** The project's domains, by name. */
  list(projectId: string): Promise<DomainView[]>;
  /** One domain; `NOT_FOUND` when the project has none of that name. */
  get(projectId: string, name: string): Promise<DomainView>;
  /** Check a domain now and write what the check found (as the scheduled check does). */
  verify(projectId: string, name: string): Promise<DomainView>;
  /** Start a rotation: a new `pending` key, signed with once its record is seen. */
  rotate(projectId: string, name: string, options?: RotateDkimOptions): Promise<DomainView>;
  /** Remove a domain and its keys; `NOT_FOUND` when absent. */
  remove(projectId: string, name: string): Promise<void>;
  /** What sending reads: signing keys and the sending policy. */
  readonly signing: DomainSigning;
  /** The scheduled re-checks, run with the worker. */
  readonly schedule: DomainSchedule;
}

/** The domains capability of an engine. */
export function createDomains(
  ctx: BaseContext,
  options: DomainsOptions = {},
  warmup?: WarmupOptions,
): Domains {
  const { store, clock } = ctx;
  const policy = options.sending ?? 'warn';
  if (!POLICIES.includes(policy)) {
    throw invalid(
      ['domains', 'sending'],
      `domains.sending must be 'warn' or 'enforce', not ${String(policy)}`,
    );
  }
  const graceDays = options.graceDays ?? 7;
  if (!(Number.isFinite(graceDays) && graceDays > 0)) {
    throw invalid(['domains', 'graceDays'], 'domains.graceDays must be a positive number of days');
  }
  const checkEveryMs = options.checkEveryMs ?? 60_000;
  if (!(Number.isFinite(checkEveryMs) && checkEveryMs >= 0)) {
    throw invalid(['domains', 'checkEveryMs'], 'domains.checkEveryMs must be 0 or a number of milliseconds');
  }
  if (options.secret !== undefined && (typeof options.secret !== 'string' || options.secret.length < 16)) {
    throw invalid(['domains', 'secret'], 'domains.secret needs at least 16 characters');
  }
  // A malformed relay fails here, once, rather than in every check.
  if (options.relay) spfMechanisms(options.relay);
  const relay = options.relay;
  const secret = installationSecret(ctx, DKIM_SEALING_SECRET_SETTING, options.secret);
  const settings = {
    resolver:
      options.resolver ?? createDnsResolver(options.dnsServers ? { servers: options.dnsServers } : {}),
    relay,
    graceMs: graceDays * DAY_MS,
    secret,
  };
  const signing = createDomainSigning(ctx, { policy, secret });
  const check = async (record: DomainRecord) => {
    const run = await runDomainCheck(ctx, settings, record);
    signing.forget(record.projectId, record.domain);
    return run;
  };
  const view = (record: DomainRecord): DomainView => {
    const shown = domainView(record, relay);
    const schedule = warmup?.domains?.[record.domain];
    if (!schedule) return shown;
    return {
      ...shown,
      warmup: { start: schedule.start, ...warmupDay(schedule, ctx.clock.now(), record.domain) },
    };
  };

  async function find(projectId: string, name: string): Promise<DomainRecord> {
    const domain = normalizeDomain(name);
    await ctx.ready();
    const record = await store.getDomain(projectId, domain);
    if (!record) throw new MailroomError('NOT_FOUND', `${domain} is not a domain of this project`);
    return record;
  }

  /** A new key for `domain`, its private half sealed. */
  async function makeKey(
    domain: string,
    algorithm: DkimAlgorithm,
    selector: string,
    now: Date,
  ): Promise<DkimKeyRecord> {
    const pair = await generateDkimKey(algorithm);
    return {
      selector,
      algorithm,
      publicKey: pair.publicKey,
      sealedPrivateKey: sealKey(pair.privateKey, await secret(), `${domain}/${selector}`),
      state: 'pending',
      createdAt: now,
      activatedAt: null,
      retireAt: null,
    };
  }

  return {
    signing,
    schedule: createDomainSchedule(ctx, checkEveryMs, check),

    async add(projectId, name, addOptions = {}) {
      const domain = normalizeDomain(name);
      const algorithm = algorithmOf(addOptions.keyType);
      const returnPath = optionalDomain(addOptions.returnPath, 'returnPath');
      const returnPathMx = optionalDomain(addOptions.returnPathMx, 'returnPathMx');
      if (returnPathMx !== null && returnPath === null) {
        throw invalid(['returnPathMx'], 'returnPathMx needs returnPath (the domain whose MX it is)');
      }
      const dmarcReports = addOptions.dmarcReports?.trim() || null;
      if (dmarcReports !== null) reportDomainOf(dmarcReports);
      await ctx.ready();
      const now = clock.now();
      const selector =
        addOptions.selector === undefined ? newSelector(now, algorithm) : checkSelector(addOptions.selector);
      if (await store.getDomain(projectId, domain)) throw exists(domain);
      const record: DomainRecord = {
        id: newId('dom', now.getTime()),
        projectId,
        domain,
        state: 'pending',
        returnPath,
        returnPathMx,
        dmarcReports,
        keys: [await makeKey(domain, algorithm, selector, now)],
        findings: null,
        checkedAt: null,
        nextCheckAt: new Date(now.getTime() + FIRST_CHECK_MS),
        createdAt: now,
        updatedAt: now,
      };
      try {
        await store.addDomain(record);
      } catch (error) {
        if (isMailroomError(error, 'CONFLICT')) throw exists(domain);
        throw error;
      }
      signing.forget(projectId, domain);
      return view(record);
    },

    async list(projectId) {
      await ctx.ready();
      return (await store.listDomains(projectId)).map(view);
    },

    async get(projectId, name) {
      return view(await find(projectId, name));
    },

    async verify(projectId, name) {
      return view((await check(await find(projectId, name))).record);
    },

    async rotate(projectId, name, rotateOptions = {}) {
      const record = await find(projectId, name);
      const current = signingKeyOf(record.keys);
      if (!current) {
        throw new MailroomError(
          'UNPROCESSABLE',
          `${record.domain} has no key in use yet: publish its DKIM record and verify it before rotating`,
        );
      }
      const awaited = record.keys.find((key) => key.state === 'pending');
      if (awaited) {
        throw new MailroomError(
          'UNPROCESSABLE',
          `A rotation of ${record.domain} is under way: publish the key ${awaited.selector} and verify it`,
        );
      }
      const algorithm = algorithmOf(rotateOptions.keyType ?? current.algorithm);
      const now = clock.now();
      const taken = record.keys.map((key) => key.selector);
      const selector =
        rotateOptions.selector === undefined
          ? newSelector(now, algorithm, taken)
          : checkSelector(rotateOptions.selector);
      if (taken.includes(selector)) {
        throw invalid(['selector'], `${record.domain} already has a key with the selector ${selector}`);
      }
      const added = await store.addDkimKey(
        record.id,
        await makeKey(record.domain, algorithm, selector, now),
        now,
      );
      if (!added) throw new MailroomError('NOT_FOUND', `${record.domain} is not a domain of this project`);
      return view(await find(projectId, record.domain));
    },

    async remove(projectId, name) {
      const domain = normalizeDomain(name);
      await ctx.ready();
      if (!(await store.removeDomain(projectId, domain))) {
        throw new MailroomError('NOT_FOUND', `${domain} is not a domain of this project`);
      }
      signing.forget(projectId, domain);
    },
  };
}

function algorithmOf(given: unknown): DkimAlgorithm {
  const algorithm = given ?? 'rsa';
  if (!ALGORITHMS.includes(algorithm as DkimAlgorithm)) {
    throw invalid(['keyType'], `The key type is rsa or ed25519, not ${JSON.stringify(given)}`);
  }
  return algorithm as DkimAlgorithm;
}

/** A domain option normalised, its issues under its own name; null when not given. */
function optionalDomain(given: string | undefined, field: string): string | null {
  if (given === undefined || given === null || given === '') return null;
  try {
    return normalizeDomain(given);
  } catch (error) {
    if (!isMailroomError(error, 'VALIDATION_FAILED')) throw error;
    const message = `${field}: ${error.message}`;
    throw invalid([field], message);
  }
}

function exists(domain: string): MailroomError {
  return new MailroomError('CONFLICT', `${domain} is already a domain of this project`);
}

function invalid(path: string[], message: string): MailroomError {
  return new MailroomError('VALIDATION_FAILED', message, { issues: [{ code: 'custom', path, message }] });
}
