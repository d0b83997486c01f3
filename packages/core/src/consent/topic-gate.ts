import type { ConsentStore } from '../store/consent-store.js';
import type { ClaimedDelivery, DeliveryRecord, MailingRecord, SourceJobRecord } from '../store/records.js';
import type { SourceJobStore } from '../store/source-job-store.js';
import { allowedByTopic } from './topic-rule.js';

/** The topic a source job filters on (`config.topic`), or null. */
export function sourceTopic(job: Pick<SourceJobRecord, 'config'>): string | null {
  const topic = (job.config as { topic?: unknown } | null)?.topic;
  return typeof topic === 'string' ? topic : null;
}

/**
 * The claim-time topic check (issue 38): a delivery of a topic mailing (its source's `topic`, else the
 * mailing's `options.topic`) goes out only when the contact's state for that topic, read now, allows it;
 * a contact who unsubscribed from the topic after the source was expanded is skipped. Per claim: one
 * topic read and one state read per (project, topic), and a source job read per mailing only when a
 * delivery names a job this process has not seen (jobs' configs never change).
 */
export interface TopicGate {
  /** The reason each blocked delivery of the claim may not go (by delivery id); empty when none. */
  blocked(
    claimed: readonly ClaimedDelivery[],
    mailingOf: (mailingId: string) => Promise<MailingRecord | undefined>,
  ): Promise<Map<string, string>>;
}

/** How many mailings' source topics a gate remembers. */
const MAX_CACHED_MAILINGS = 1024;

/** A topic gate on `store`, with its own cache of source jobs' topics. */
export function createTopicGate(
  store: Pick<ConsentStore, 'getTopic' | 'findTopicStates'> & Pick<SourceJobStore, 'listSourceJobs'>,
): TopicGate {
  const jobTopics = new Map<string, Map<string, string | null>>();

  async function topicOfSource(
    delivery: Pick<DeliveryRecord, 'mailingId' | 'batchId'>,
  ): Promise<string | null> {
    if (!delivery.batchId.startsWith('src_')) return null;
    let known = jobTopics.get(delivery.mailingId);
    if (!known?.has(delivery.batchId)) {
      const jobs = await store.listSourceJobs(delivery.mailingId);
      known = new Map(jobs.map((j) => [j.id, sourceTopic(j)]));
      if (jobTopics.size >= MAX_CACHED_MAILINGS) jobTopics.clear();
      jobTopics.set(delivery.mailingId, known);
    }
    return known.get(delivery.batchId) ?? null;
  }

  return {
    async blocked(claimed, mailingOf) {
      const reasons = new Map<string, string>();
      // (projectId, topic) -> the deliveries of the claim that need it.
      const groups = new Map<string, { projectId: string; topic: string; deliveries: ClaimedDelivery[] }>();
      for (const delivery of claimed) {
        const mailing = await mailingOf(delivery.mailingId);
        if (!mailing) continue;
        const topic = (await topicOfSource(delivery)) ?? mailing.options.topic ?? null;
        if (topic === null) continue;
        const k = `${delivery.projectId}\n${topic}`;
        const group = groups.get(k) ?? { projectId: delivery.projectId, topic, deliveries: [] };
        group.deliveries.push(delivery);
        groups.set(k, group);
      }
      for (const { projectId, topic, deliveries } of groups.values()) {
        const record = await store.getTopic(projectId, topic);
        if (!record) {
          for (const d of deliveries) reasons.set(d.id, `topic ${topic} no longer exists`);
          continue;
        }
        const addresses = deliveries.map((d) => d.address);
        const allowed = allowedByTopic(
          record,
          await store.findTopicStates(projectId, topic, addresses),
          addresses,
        );
        for (const d of deliveries) {
          if (!allowed.has(d.address)) reasons.set(d.id, `unsubscribed from topic ${topic}`);
        }
      }
      return reasons;
    },
  };
}

/**
 * The deliveries of a source page the topic allows (expansion time; the claim-time gate checks again for
 * changes after it). One topic read and one state read per page.
 */
export async function keepTopicAllowed<D extends Pick<DeliveryRecord, 'address'>>(
  store: Pick<ConsentStore, 'getTopic' | 'findTopicStates'>,
  projectId: string,
  topic: string,
  deliveries: D[],
): Promise<D[]> {
  if (deliveries.length === 0) return deliveries;
  const record = await store.getTopic(projectId, topic);
  if (!record) return [];
  const addresses = deliveries.map((d) => d.address);
  const allowed = allowedByTopic(record, await store.findTopicStates(projectId, topic, addresses), addresses);
  return deliveries.filter((d) => allowed.has(d.address));
}
