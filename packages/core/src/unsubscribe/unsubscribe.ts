import { publicBaseUrl } from '../base/base-url.js';
import { MailroomError } from '../base/errors.js';
import { changeConsent } from '../consent/consent-change.js';
import { sourceTopic } from '../consent/topic-gate.js';
import { installationSecret } from '../context/installation-secret.js';
import type { DeliveryRecord, MailingRecord } from '../store/records.js';
import type { UnsubscribeContext } from './unsubscribe-context.js';
import type { UnsubscribeEvents } from './unsubscribe-events.js';
import type { UnsubscribeLinks } from './unsubscribe-links.js';
import type { UnsubscribeOptions, UnsubscribeTarget } from './unsubscribe-options.js';
import {
  MIN_UNSUBSCRIBE_SECRET_LENGTH,
  parseUnsubscribeToken,
  signUnsubscribeToken,
  verifyUnsubscribeToken,
} from './unsubscribe-token.js';

/** The installation setting that holds the generated secret when none is configured. */
export const UNSUBSCRIBE_SECRET_SETTING = 'unsubscribe-secret';

/**
 * Links signed with `options.secret`, or with a secret generated once and kept in the store (so that every
 * process on the store signs alike and links survive restarts).
 */
export function createUnsubscribeLinks(
  ctx: UnsubscribeContext,
  options: UnsubscribeOptions,
): UnsubscribeLinks {
  const { store, logger } = ctx;
  const events = ctx.events.view<UnsubscribeEvents>();
  if (options.secret !== undefined && options.secret.length < MIN_UNSUBSCRIBE_SECRET_LENGTH) {
    throw invalidOption(
      'secret',
      `The unsubscribe secret needs at least ${MIN_UNSUBSCRIBE_SECRET_LENGTH} characters`,
    );
  }
  const fixedBase = typeof options.baseUrl === 'string' ? baseOf(options.baseUrl) : undefined;
  const getSecret = installationSecret(ctx, UNSUBSCRIBE_SECRET_SETTING, options.secret);

  async function resolve(token: string): Promise<UnsubscribeTarget> {
    await ctx.ready();
    // One answer for every way a token can be wrong: nothing to learn from the difference.
    const notFound = () => new MailroomError('NOT_FOUND', 'Unknown or invalid unsubscribe link');
    const parsed = parseUnsubscribeToken(token);
    if (!parsed) throw notFound();
    const key = await getSecret();
    const delivery = await store.getDelivery(parsed.deliveryId);
    if (!delivery) throw notFound();
    const fields = {
      projectId: delivery.projectId,
      mailingId: delivery.mailingId,
      address: delivery.address,
      deliveryId: delivery.id,
    };
    if (!verifyUnsubscribeToken(key, parsed, fields)) throw notFound();
    const [mailing, project] = await Promise.all([
      store.getMailingById(delivery.mailingId),
      store.getProject(delivery.projectId),
    ]);
    if (!mailing || !project) throw notFound();
    return {
      projectId: project.id,
      projectName: project.name,
      address: delivery.address,
      broadcastRef: mailing.ref,
      topic: await topicOfDelivery(mailing, delivery),
    };
  }

  /** The topic the delivery was sent to (its source's, else the mailing's), while it exists. */
  async function topicOfDelivery(
    mailing: MailingRecord,
    delivery: DeliveryRecord,
  ): Promise<UnsubscribeTarget['topic']> {
    let key = mailing.options.topic ?? null;
    if (delivery.batchId.startsWith('src_')) {
      const job = (await store.listSourceJobs(mailing.id)).find((j) => j.id === delivery.batchId);
      key = (job && sourceTopic(job)) ?? key;
    }
    if (key === null) return null;
    const topic = await store.getTopic(mailing.projectId, key);
    return topic ? { key: topic.key, name: topic.name } : null;
  }

  return {
    async link(mailing, delivery) {
      const token = signUnsubscribeToken(await getSecret(), {
        projectId: mailing.projectId,
        mailingId: mailing.id,
        address: delivery.address,
        deliveryId: delivery.id,
      });
      const base =
        fixedBase ?? baseOf(typeof options.baseUrl === 'function' ? options.baseUrl() : options.baseUrl);
      return `${base}/unsubscribe/${token}`;
    },

    resolve,

    async unsubscribe(token, request = {}) {
      const target = await resolve(token);
      const topic = request.everything ? null : target.topic;
      // A topic broadcast's link leaves that topic only; otherwise (or on the page's second button) everything.
      // A repeat (a second click, a mail client retrying) changes, records and announces nothing.
      const changed = await changeConsent(ctx, {
        projectId: target.projectId,
        address: target.address,
        ...(topic ? { topics: { [topic.key]: 'unsubscribed' } } : { status: 'unsubscribed' }),
        source: request.source ?? (request.everything ? 'unsubscribe-page' : 'one-click'),
        meta: { ip: request.ip ?? null, userAgent: request.userAgent ?? null },
        mailingRef: target.broadcastRef,
        topicKey: target.topic?.key ?? null,
      });
      if (changed.topics.length === 0 && changed.status === undefined) return target;
      logger.info(
        { projectId: target.projectId, broadcastRef: target.broadcastRef, topic: topic?.key },
        'one-click unsubscribe',
      );
      events.emit('unsubscribe', {
        projectId: target.projectId,
        address: target.address,
        broadcastRef: target.broadcastRef,
        ...(topic ? { topic: topic.key } : {}),
      });
      return target;
    },
  };
}

/** The base of the links made now (`options.baseUrl`, read each time when a function). Internal. */
export function linkBase(options: Pick<UnsubscribeOptions, 'baseUrl'>): string {
  return baseOf(typeof options.baseUrl === 'function' ? options.baseUrl() : options.baseUrl);
}

/** The base URL without a trailing slash; an absolute http(s) URL or `VALIDATION_FAILED`. */
function baseOf(baseUrl: string): string {
  return publicBaseUrl(baseUrl, 'unsubscribe');
}

function invalidOption(field: string, message: string): MailroomError {
  return new MailroomError('VALIDATION_FAILED', message, {
    issues: [{ code: 'custom', path: ['unsubscribe', field], message }],
  });
}
