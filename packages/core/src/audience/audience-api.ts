import { z } from 'zod';
import type { MailroomAdmin } from '../admin/admin-types.js';
import { clampLimit, normalizePrefix, sourceJobView } from '../admin/dashboard-queries.js';
import { MailroomError } from '../base/errors.js';
import { newId } from '../base/ids.js';
import { eraseConsentOf } from '../consent/consent-change.js';
import type { MailroomTopics } from '../consent/consent-types.js';
import type { AuthContext } from '../context/auth-context.js';
import type { BaseContext } from '../context/base-context.js';
import { copyVariables } from '../request/copy-variables.js';
import {
  checkAddress,
  normalizeAddress,
  PROFILE_TRAITS_BUDGET,
  toValidationIssues,
} from '../request/index.js';
import { validationError } from '../request/issues.js';
import { probeCsvSource } from '../sources/csv-probe.js';
import { isAudienceImport } from '../store/audience-admin-store.js';
import type { Json, ProfileRecord, SourceJobRecord, Variables } from '../store/records.js';
import type { ImportView, MailroomAudience, ProfilePatch, ProfileView } from './audience-types.js';

/** How many consent records a profile's detail carries (the rest: `mailroom.topics.history`). */
const PROFILE_CONSENT_LIMIT = 500;

/** A JSON value, as zod checks one. */
const json: z.ZodType<Json> = z.lazy(() =>
  z.union([z.string(), z.number(), z.boolean(), z.null(), z.array(json), z.record(z.string(), json)]),
);

const PATCH_SCHEMA = z.strictObject({
  address: z.string().min(1).optional(),
  name: z.string().max(320).nullable().optional(),
  traits: z.record(z.string(), json).optional(),
  labels: z.array(z.string().min(1).max(255)).max(100).optional(),
});

const IMPORT_SCHEMA = z.strictObject({
  url: z.string().min(1),
  group: z.string().min(1),
  label: z.string().trim().min(1).max(255).optional(),
  columnMappings: z.record(z.string(), z.string()).optional(),
});

/** The config of an import's source job: a CSV source's, and the group its rows join. */
interface ImportConfig {
  label: string;
  url: string;
  groupId: string;
  groupRef: string;
}

/** What the audience API borrows from the engine. */
export interface AudienceApiDeps {
  resolveAuth(auth: string | AuthContext): Promise<AuthContext>;
  admin: Pick<MailroomAdmin, 'createAudienceGroup'>;
  /** A profile's topics and consent history (its detail). */
  topics: Pick<MailroomTopics, 'contactTopics' | 'history'>;
}

/**
 * `mailroom.audience`: the project's groups and profiles over the API, erasure requests and CSV imports
 * (a source job like a broadcast's CSV source, feeding a group; the worker expands it).
 */
export function createAudienceApi(ctx: BaseContext, deps: AudienceApiDeps): MailroomAudience {
  const { store, clock } = ctx;

  const projectOf = async (auth: string | AuthContext): Promise<string> =>
    (await deps.resolveAuth(auth)).project.id;

  async function findGroup(projectId: string, ref: string) {
    const group = await store.getGroup(projectId, ref);
    if (!group) throw new MailroomError('NOT_FOUND', `Audience group ${ref} not found`);
    return group;
  }

  async function findProfile(projectId: string, address: string): Promise<ProfileRecord> {
    const profile = await store.getProfile(projectId, normalizeAddress(address));
    if (!profile) throw new MailroomError('NOT_FOUND', `Profile ${address} not found`);
    return profile;
  }

  return {
    async listGroups(auth) {
      const projectId = await projectOf(auth);
      return (await store.listGroups(projectId)).map((g) => ({
        ref: g.ref,
        name: g.name,
        doubleOptIn: g.doubleOptIn ?? false,
        members: g.members,
        createdAt: g.createdAt,
      }));
    },

    async createGroup(auth, input) {
      const projectId = await projectOf(auth);
      const group = await deps.admin.createAudienceGroup(projectId, {
        ref: input.ref,
        ...(input.name ? { name: input.name } : {}),
        ...(input.doubleOptIn ? { doubleOptIn: true } : {}),
      });
      return {
        ref: group.ref,
        name: group.name,
        doubleOptIn: group.doubleOptIn ?? false,
        members: 0,
        createdAt: group.createdAt,
      };
    },

    async deleteGroup(auth, ref) {
      const projectId = await projectOf(auth);
      if (!(await store.deleteGroup(projectId, ref)))
        throw new MailroomError('NOT_FOUND', `Audience group ${ref} not found`);
    },

    async listMembers(auth, ref, page = {}) {
      const projectId = await projectOf(auth);
      const group = await findGroup(projectId, ref);
      const limit = clampLimit(page.limit, 50, 500);
      const rows = await store.listGroupMembers(projectId, group.id, {
        after: page.after ?? null,
        limit: limit + 1,
      });
      return pageOf(rows, limit);
    },

    async listProfiles(auth, search = {}) {
      const projectId = await projectOf(auth);
      const limit = clampLimit(search.limit, 50, 500);
      const rows = await store.listProfiles(
        projectId,
        {
          ...(search.q ? { prefix: normalizePrefix(search.q) } : {}),
          ...(search.label ? { label: search.label } : {}),
        },
        { after: search.after ?? null, limit: limit + 1 },
      );
      return pageOf(rows, limit);
    },

    async getProfile(auth, address) {
      const caller = await deps.resolveAuth(auth);
      const projectId = caller.project.id;
      const profile = await findProfile(projectId, address);
      const [suppression] = await store.findSuppressed(projectId, [profile.address]);
      const [topics, history] = await Promise.all([
        deps.topics.contactTopics(caller, profile.address),
        deps.topics.history(caller, profile.address, { limit: PROFILE_CONSENT_LIMIT }),
      ]);
      return {
        ...profileView(profile),
        suppression: suppression
          ? { reason: suppression.reason, detail: suppression.detail, createdAt: suppression.createdAt }
          : null,
        topics,
        consent: history.data,
      };
    },

    async updateProfile(auth, address, body) {
      const projectId = await projectOf(auth);
      const parsed = PATCH_SCHEMA.safeParse(body);
      if (!parsed.success) throw validationError(toValidationIssues(parsed.error.issues), parsed.error);
      const patch: ProfilePatch = parsed.data;
      const profile = await findProfile(projectId, address);
      let target: string | undefined;
      if (patch.address !== undefined) {
        const checked = checkAddress(patch.address);
        if (!checked.ok) throw fieldError('address', checked.reason);
        target = checked.address;
      }
      const now = clock.now();
      try {
        const updated = await store.updateProfile(
          projectId,
          profile.address,
          {
            ...(target !== undefined ? { address: target } : {}),
            ...(patch.name !== undefined ? { name: patch.name?.trim() || null } : {}),
            ...(patch.traits !== undefined
              ? { traits: cappedTraits(mergeTraits(profile.traits, patch.traits)) }
              : {}),
            ...(patch.labels !== undefined ? { labels: [...new Set(patch.labels)] } : {}),
          },
          now,
        );
        if (!updated) throw new MailroomError('NOT_FOUND', `Profile ${address} not found`);
        return profileView(updated);
      } catch (error) {
        if (error instanceof MailroomError && error.code === 'CONFLICT') {
          const message = `A profile with the address ${target} already exists`;
          throw new MailroomError('CONFLICT', message, {
            cause: error,
            issues: [{ code: 'custom', path: ['address'], message }],
          });
        }
        throw error;
      }
    },

    async eraseProfile(auth, address) {
      const projectId = await projectOf(auth);
      const normalized = normalizeAddress(address);
      const counts = await store.eraseAddress(projectId, normalized, clock.now());
      // The contact's tracked events and automation runs go too (their properties are the app's data on it).
      const automations = await store.eraseAutomationContact(projectId, normalized);
      if (automations === 0 && Object.values(counts).every((n) => n === 0))
        throw new MailroomError('NOT_FOUND', `Profile ${address} not found`);
      // Topic states go; the consent history stays as evidence, under a hash of the address.
      await eraseConsentOf(ctx, projectId, normalized);
      return { address: normalized, ...counts };
    },

    async startImport(auth, body) {
      const projectId = await projectOf(auth);
      const parsed = IMPORT_SCHEMA.safeParse(body);
      if (!parsed.success) throw validationError(toValidationIssues(parsed.error.issues), parsed.error);
      const request = parsed.data;
      const group = await store.getGroup(projectId, request.group);
      if (!group) throw fieldError('group', `Audience group ${request.group} not found`, 'UNPROCESSABLE');
      let url: URL;
      try {
        url = new URL(request.url.trim());
      } catch {
        throw fieldError('url', 'Must be an absolute http(s) URL');
      }
      if (url.protocol !== 'http:' && url.protocol !== 'https:')
        throw fieldError('url', 'Must be an absolute http(s) URL');
      const label = request.label ?? group.ref;
      // The same probe as a broadcast's CSV source: one byte range, the size and the validator.
      const csv = await probeCsvSource(ctx, {
        kind: 'csv',
        label,
        url: url.toString(),
        columnMappings: request.columnMappings ?? {},
        topic: null,
      });
      const now = clock.now();
      const id = newId('imp', now.getTime());
      const config: ImportConfig = { ...csv, label, groupId: group.id, groupRef: group.ref };
      const job: SourceJobRecord = {
        id,
        projectId,
        mailingId: id,
        batchId: id,
        kind: 'csv',
        config: config as unknown as Json,
        status: 'pending',
        checkpoint: null,
        rowsDone: 0,
        rowsFailed: 0,
        rowErrors: [],
        error: null,
        leaseExpiresAt: null,
        leaseToken: 0,
        createdAt: now,
        updatedAt: now,
      };
      await store.insertImportJob(job);
      return importView(job);
    },

    async getImport(auth, id) {
      const projectId = await projectOf(auth);
      const job = (await store.listSourceJobs(id)).find(
        (j) => j.id === id && j.projectId === projectId && isAudienceImport(j),
      );
      if (!job) throw new MailroomError('NOT_FOUND', `Import ${id} not found`);
      return importView(job);
    },
  };
}

function importView(job: SourceJobRecord): ImportView {
  const { kind: _kind, name: _name, ...progress } = sourceJobView(job);
  const config = job.config as unknown as ImportConfig;
  return { id: job.id, group: config.groupRef, label: config.label, ...progress };
}

function profileView(p: ProfileRecord): ProfileView {
  return {
    address: p.address,
    name: p.name,
    traits: p.traits,
    status: p.status,
    labels: p.labels,
    createdAt: p.createdAt,
    updatedAt: p.updatedAt,
  };
}

function pageOf(rows: ProfileRecord[], limit: number): { items: ProfileView[]; next: string | null } {
  const items = rows.slice(0, limit).map(profileView);
  return { items, next: rows.length > limit ? (items.at(-1)?.address ?? null) : null };
}

/** RFC 7396 at the top level: a key set to null is removed, any other replaces the stored value. */
/**
 * The merged traits, or `VALIDATION_FAILED` on `traits` naming the cap they pass: `profileTraits` (keys at
 * every depth) or `profileTraitBytes` (JSON bytes), the caps of a recipient's variables.
 */
function cappedTraits(traits: Variables): Variables {
  const checked = copyVariables(traits, PROFILE_TRAITS_BUDGET);
  if (checked.ok) return checked.value;
  const cap = /keys/.test(checked.reason) ? 'profileTraits' : 'profileTraitBytes';
  throw fieldError('traits', `${checked.reason} (the ${cap} cap of a profile's traits, after the merge)`);
}

function mergeTraits(stored: Variables, patch: Record<string, Json>): Variables {
  const out: Variables = { ...stored };
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete out[key];
    else out[key] = value;
  }
  return out;
}

function fieldError(
  field: string,
  message: string,
  code: 'VALIDATION_FAILED' | 'UNPROCESSABLE' = 'VALIDATION_FAILED',
): MailroomError {
  return new MailroomError(code, `${field}: ${message}`, {
    issues: [{ code: 'custom', path: [field], message }],
  });
}
