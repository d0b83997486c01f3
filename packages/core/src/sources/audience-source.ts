import { domainOf, localPart, newDelivery } from '../accept.js';
import type { SourceExpander } from './source-expander.js';

/** Members read from an audience group per page. */
export const AUDIENCE_PAGE_SIZE = 500;

/** The config an audience-group source job carries (see `resolveSources`). */
export interface AudienceSourceConfig {
  groupId: string;
  ref: string;
  actionOnExistingTrait: 'preserve' | 'override';
  actionOnExistingProfile: 'preserve' | 'override';
  includeUnsubscribed: boolean;
}

/**
 * Audience-group sources: members in address order, a page at a time, checkpointed by the last address.
 * Unsubscribed members are left out unless the source says `includeUnsubscribed`; suppressed ones are
 * caught at send time like every delivery.
 */
export const audienceExpander: SourceExpander = {
  async expandPage(job, { ctx, entry, now }) {
    const config = job.config as unknown as AudienceSourceConfig;
    const checkpoint = job.checkpoint as { after?: string | null } | null;
    const members = await ctx.store.listGroupMembers(job.projectId, config.groupId, {
      after: checkpoint?.after ?? null,
      limit: AUDIENCE_PAGE_SIZE,
    });
    const { mailing } = entry;
    const notBefore =
      mailing.options.scheduleFor && mailing.options.scheduleFor > now ? mailing.options.scheduleFor : now;
    const domain = domainOf(mailing.sender.address);
    const deliveries = members
      .filter((m) => config.includeUnsubscribed || m.status === 'subscribed')
      // The job id stands as batch id: the worker reads the source's options through it at send time.
      .map((m) =>
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
      profiles: [],
      profileOptions: { onExistingProfile: 'preserve', onExistingTrait: 'preserve' },
      patch: {
        checkpoint: { after: members.at(-1)?.address ?? checkpoint?.after ?? null },
        rowsDone: job.rowsDone + members.length,
        ...(done ? { status: 'done' as const } : {}),
      },
    };
  },
};
