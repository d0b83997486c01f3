import { domainOf, foldAddress, localPart } from '../base/address-parts.js';
import { MailroomError } from '../base/errors.js';
import { sourceTopic } from '../consent/topic-gate.js';
import type { BaseContext } from '../context/base-context.js';
import { newDelivery } from '../store/new-delivery.js';
import type { ProfileRecord, ProfileUpsert, SourceJobRecord } from '../store/records.js';
import type { SourceEnv, SourceExpander, SourcePage } from './source-expander.js';

/** Members read from an audience group per page. */
export const AUDIENCE_PAGE_SIZE = 500;

/** The config an audience-group source job carries (see `resolveSources`). */
export interface AudienceSourceConfig {
  groupId: string;
  ref: string;
  /**
   * For a member whose address the broadcast also brings data for (a CSV row of one of its sources):
   * `preserve` (default) keeps every trait the stored profile already has; `override` lets the incoming
   * value replace it. Traits only one side has are always combined.
   */
  actionOnExistingTrait: 'preserve' | 'override';
  /**
   * For such a member: `preserve` (default) keeps the stored profile's own fields (its name; a missing
   * one is filled in); `override` lets the incoming name replace it.
   */
  actionOnExistingProfile: 'preserve' | 'override';
  /** Unsubscribed members get the broadcast too. Suppressed addresses never do. @default false */
  includeUnsubscribed: boolean;
  /** Only members whose state for this topic allows it (issue 38); else the mailing's `options.topic`. */
  topic?: string;
}

/**
 * Audience-group sources: members in address order, a page at a time, checkpointed by the last address
 * listed. Each member becomes a delivery carrying the
 * stored profile's name and traits. Left out: unsubscribed members unless `includeUnsubscribed`, and
 * suppressed addresses always (the send-time checks stay, for changes after expansion).
 *
 * When the broadcast already holds a CSV row for a member (its delivery came from a CSV source), the
 * member's profile is updated from that row by the store's `ProfileUpsert` rules, with
 * `actionOnExistingProfile` and `actionOnExistingTrait` as the options; the CSV expander does the same
 * for rows that arrive after the member was expanded, so the order the two sources run in does not
 * matter. A delivery is never rewritten: it renders with the data of the part of the broadcast that
 * reached the address first.
 */
export const audienceExpander: SourceExpander = {
  async expandPage(job, env) {
    return audiencePage(job, env, env.now);
  },
};

async function audiencePage(job: SourceJobRecord, env: SourceEnv, now: Date): Promise<SourcePage> {
  const { ctx, entry } = env;
  const config = job.config as unknown as AudienceSourceConfig;
  const checkpoint = job.checkpoint as { after?: string | null } | null;
  if (entry === null)
    throw new MailroomError('UNPROCESSABLE', `Audience source job ${job.id} has no mailing`);
  const { mailing } = entry;
  const topicKey = sourceTopic(job) ?? mailing.options.topic ?? null;
  const page = { after: checkpoint?.after ?? null, limit: AUDIENCE_PAGE_SIZE };
  let members: ProfileRecord[];
  if (topicKey === null) {
    members = await ctx.store.listGroupMembers(job.projectId, config.groupId, page);
  } else {
    // A topic broadcast: the store lists only the members the topic allows (one read for the page; the
    // members it leaves out are never read, so a topic that keeps half a group costs what a group of that
    // half does). The claim checks the states again. A topic deleted since accept reaches no one.
    const topic = await ctx.store.getTopic(job.projectId, topicKey);
    members = topic ? await ctx.store.listTopicMembers(job.projectId, config.groupId, topic, page) : [];
  }
  const notBefore =
    mailing.options.scheduleFor && mailing.options.scheduleFor > now ? mailing.options.scheduleFor : now;
  const domain = domainOf(mailing.sender.address);
  const selected = await selectMembers(ctx, job.projectId, config, members);
  // The job id stands as batch id: the worker reads the source's options through it at send time.
  const deliveries = selected.map((m) =>
    newDelivery(
      mailing,
      job.id,
      { address: m.address, name: m.name ?? localPart(m.address), traits: m.traits },
      notBefore,
      domain,
      now,
    ),
  );
  const done = members.length < AUDIENCE_PAGE_SIZE;
  return {
    deliveries,
    profiles: await incomingFromCsv(ctx, job, members),
    profileOptions: {
      onExistingProfile: config.actionOnExistingProfile,
      onExistingTrait: config.actionOnExistingTrait,
    },
    patch: {
      checkpoint: { after: members.at(-1)?.address ?? checkpoint?.after ?? null },
      rowsDone: job.rowsDone + members.length,
      ...(done ? { status: 'done' as const } : {}),
    },
  };
}

/**
 * The members of a page who get a delivery: subscribed (or `includeUnsubscribed`) and not suppressed
 * (read only for those left). Deliveries are made for these alone.
 */
async function selectMembers(
  ctx: BaseContext,
  projectId: string,
  config: AudienceSourceConfig,
  members: ProfileRecord[],
): Promise<ProfileRecord[]> {
  const subscribed = members.filter((m) => config.includeUnsubscribed || m.status === 'subscribed');
  if (subscribed.length === 0) return subscribed;
  // Suppressions come back folded: a member is compared by its folded address.
  const suppressed = new Set(
    (
      await ctx.store.findSuppressed(
        projectId,
        subscribed.map((m) => m.address),
      )
    ).map((s) => s.address),
  );
  return suppressed.size === 0
    ? subscribed
    : subscribed.filter((m) => !suppressed.has(foldAddress(m.address)));
}

/**
 * The CSV rows this broadcast already holds for these members, as profile upserts. A CSV delivery whose
 * name is the address's local part had no name in its row: that default is not incoming data.
 */
async function incomingFromCsv(
  ctx: BaseContext,
  job: SourceJobRecord,
  members: ProfileRecord[],
): Promise<ProfileUpsert[]> {
  if (members.length === 0) return [];
  const csvJobs = new Set(
    (await ctx.store.listSourceJobs(job.mailingId)).filter((j) => j.kind === 'csv').map((j) => j.id),
  );
  if (csvJobs.size === 0) return [];
  const upserts: ProfileUpsert[] = [];
  for (const member of members) {
    const delivery = await ctx.store.findDelivery(job.mailingId, member.address);
    if (!delivery || !csvJobs.has(delivery.batchId)) continue;
    const upsert: ProfileUpsert = { address: member.address, traits: delivery.traits };
    if (delivery.name !== localPart(delivery.address)) upsert.name = delivery.name;
    upserts.push(upsert);
  }
  return upserts;
}
