import { z } from 'zod';
import { MailroomError } from '../base/errors.js';
import type { AuthContext } from '../context/auth-context.js';
import type { BaseContext } from '../context/base-context.js';
import type { ResolveAuth } from '../context/capability.js';
import { normalizeAddress, toValidationIssues } from '../request/index.js';
import type { ConsentRecord, TopicRecord, TopicState } from '../store/consent-records.js';
import { changeConsent } from './consent-change.js';
import type { ConsentRecordView, ContactTopicView, MailroomTopics, TopicView } from './consent-types.js';
import { TOPIC_KEY, topicStateOf } from './topic-rule.js';

const NAME = z.string().trim().min(1).max(256);
const DESCRIPTION = z.string().max(2000).nullable().optional();
const DEFAULT = z.enum(['opt-in', 'opt-out']).optional();
const VISIBILITY = z.enum(['public', 'private']).optional();
const DOUBLE_OPT_IN = z.boolean().optional();

const CREATE_SCHEMA = z.strictObject({
  key: z.string().regex(TOPIC_KEY, 'A key is 1 to 64 of a-z 0-9 . _ -, starting with a letter or digit'),
  name: NAME,
  description: DESCRIPTION,
  default: DEFAULT,
  visibility: VISIBILITY,
  doubleOptIn: DOUBLE_OPT_IN,
});

const PATCH_SCHEMA = z.strictObject({
  name: NAME.optional(),
  description: DESCRIPTION,
  default: DEFAULT,
  visibility: VISIBILITY,
  doubleOptIn: DOUBLE_OPT_IN,
});

const STATES_SCHEMA = z
  .record(z.string().max(64), z.enum(['subscribed', 'unsubscribed']).nullable())
  .refine((v) => Object.keys(v).length <= 100, 'At most 100 topics at once');

/** A topic as the API shows it. */
export function topicView(t: TopicRecord): TopicView {
  return {
    key: t.key,
    name: t.name,
    description: t.description,
    default: t.defaultState,
    visibility: t.visibility,
    doubleOptIn: t.doubleOptIn,
    createdAt: t.createdAt,
    updatedAt: t.updatedAt,
  };
}

function recordView(r: ConsentRecord): ConsentRecordView {
  return {
    id: r.id,
    at: r.at,
    change: r.change,
    topic: r.topicKey,
    state: r.state,
    source: r.source,
    ip: r.ip,
    userAgent: r.userAgent,
    mailingRef: r.mailingRef,
    wording: r.wording ?? null,
  };
}

function parse<T>(schema: z.ZodType<T>, input: unknown): T {
  const result = schema.safeParse(input);
  if (!result.success) {
    throw new MailroomError('VALIDATION_FAILED', 'Invalid topic request', {
      issues: toValidationIssues(result.error.issues),
    });
  }
  return result.data;
}

/**
 * `mailroom.topics`: a project's topics (key, name, description, default, visibility), each contact's
 * state per topic, and the consent history. Every call is scoped to the caller's project.
 */
export function createTopicsApi(ctx: BaseContext, resolveAuth: ResolveAuth): MailroomTopics {
  const { store, clock } = ctx;
  const projectOf = async (auth: string | AuthContext) => (await resolveAuth(auth)).project.id;
  const notFound = (key: string) => new MailroomError('NOT_FOUND', `Topic ${key} not found`);

  async function contactTopics(projectId: string, address: string): Promise<ContactTopicView[]> {
    const [topics, states] = await Promise.all([
      store.listTopics(projectId),
      store.topicStates(projectId, address),
    ]);
    const explicit = new Map(states.map((s) => [s.topicKey, s.state]));
    return topics.map((t) => ({
      key: t.key,
      name: t.name,
      visibility: t.visibility,
      state: topicStateOf(t, explicit.get(t.key)),
      explicit: explicit.has(t.key),
    }));
  }

  return {
    async list(auth) {
      return (await store.listTopics(await projectOf(auth))).map(topicView);
    },

    async create(auth, input) {
      const projectId = await projectOf(auth);
      const body = parse(CREATE_SCHEMA, input);
      const now = clock.now();
      const topic: TopicRecord = {
        projectId,
        key: body.key,
        name: body.name,
        description: body.description ?? null,
        defaultState: body.default ?? 'opt-in',
        visibility: body.visibility ?? 'public',
        doubleOptIn: body.doubleOptIn ?? false,
        createdAt: now,
        updatedAt: now,
      };
      await store.createTopic(topic);
      return topicView(topic);
    },

    async get(auth, key) {
      const topic = await store.getTopic(await projectOf(auth), key);
      if (!topic) throw notFound(key);
      return topicView(topic);
    },

    async update(auth, key, patch) {
      const projectId = await projectOf(auth);
      const body = parse(PATCH_SCHEMA, patch);
      const topic = await store.updateTopic(
        projectId,
        key,
        {
          ...(body.name !== undefined ? { name: body.name } : {}),
          ...(body.description !== undefined ? { description: body.description } : {}),
          ...(body.default !== undefined ? { defaultState: body.default } : {}),
          ...(body.visibility !== undefined ? { visibility: body.visibility } : {}),
          ...(body.doubleOptIn !== undefined ? { doubleOptIn: body.doubleOptIn } : {}),
        },
        clock.now(),
      );
      if (!topic) throw notFound(key);
      return topicView(topic);
    },

    async remove(auth, key) {
      if (!(await store.deleteTopic(await projectOf(auth), key))) throw notFound(key);
    },

    async contactTopics(auth, address) {
      const projectId = await projectOf(auth);
      const normalized = normalizeAddress(address);
      if (!(await store.getProfile(projectId, normalized))) {
        throw new MailroomError('NOT_FOUND', `Profile ${address} not found`);
      }
      return contactTopics(projectId, normalized);
    },

    async setContactTopics(auth, address, topics, options = {}) {
      const projectId = await projectOf(auth);
      const normalized = normalizeAddress(address);
      const states = parse(STATES_SCHEMA, topics) as Record<string, TopicState | null>;
      const known = new Set((await store.listTopics(projectId)).map((t) => t.key));
      for (const key of Object.keys(states)) if (!known.has(key)) throw notFound(key);
      await changeConsent(ctx, {
        projectId,
        address: normalized,
        topics: states,
        source: options.source ?? 'api',
        meta: options,
      });
      return contactTopics(projectId, normalized);
    },

    async history(auth, address, page = {}) {
      const projectId = await projectOf(auth);
      const limit = Math.min(Math.max(Math.trunc(page.limit ?? 100), 1), 500);
      const rows = await store.listConsentRecords(projectId, normalizeAddress(address), {
        after: page.after ?? null,
        limit: limit + 1,
      });
      const data = rows.slice(0, limit).map(recordView);
      return { data, next: rows.length > limit ? (data.at(-1)?.id ?? null) : null };
    },
  };
}
