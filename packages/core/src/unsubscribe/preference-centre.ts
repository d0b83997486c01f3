import { hashedAddress } from '../base/address-hash.js';
import { MailroomError } from '../base/errors.js';
import { changeConsent } from '../consent/consent-change.js';
import { topicStateOf } from '../consent/topic-rule.js';
import { installationSecret } from '../context/installation-secret.js';
import type { TopicState } from '../store/consent-records.js';
import {
  openPreferenceToken,
  type PreferenceTokenFields,
  sealPreferenceToken,
  signPreferenceCsrf,
  verifyPreferenceCsrf,
} from './preference-token.js';
import type { PreferenceCentre, PreferencePage, PreferenceSave } from './preference-types.js';
import { linkBase, UNSUBSCRIBE_SECRET_SETTING } from './unsubscribe.js';
import type { UnsubscribeContext } from './unsubscribe-context.js';
import type { UnsubscribeOptions } from './unsubscribe-options.js';

/** The source of every consent record the page writes. */
export const PREFERENCE_PAGE_SOURCE = 'preference-page';

/**
 * The hosted preference centre (issue 38): `{{ preferences_url }}` gives each contact a link of its own
 * (`preference-token.ts`), its page lists the project's public topics with the contact's state, and a POST
 * with the page's CSRF token changes them through `changeConsent` (records of source `preference-page`,
 * events). Signed with the unsubscribe secret, under the unsubscribe base URL.
 */
export function createPreferenceCentre(
  ctx: UnsubscribeContext,
  options: UnsubscribeOptions,
): PreferenceCentre {
  const { store, clock } = ctx;
  const getSecret = installationSecret(ctx, UNSUBSCRIBE_SECRET_SETTING, options.secret);
  const notFound = () => new MailroomError('NOT_FOUND', 'Unknown or invalid preferences link');

  async function contactOf(token: string): Promise<PreferenceTokenFields> {
    await ctx.ready();
    const fields = openPreferenceToken(await getSecret(), token);
    if (!fields) throw notFound();
    return fields;
  }

  async function page(token: string, fields: PreferenceTokenFields): Promise<PreferencePage> {
    const { projectId, address } = fields;
    const [project, profile, topics, states, brand] = await Promise.all([
      store.getProject(projectId),
      store.getProfile(projectId, address),
      store.listTopics(projectId),
      store.topicStates(projectId, address),
      store.getProjectBrand(projectId),
    ]);
    if (!project) throw notFound();
    if (!profile) {
      // A link we made whose contact has no profile: erased (kept as a hash), or never indexed (a single
      // message's recipient), whose page shows the defaults.
      const erased = await store.findErasedAddresses(projectId, [hashedAddress(projectId, address)]);
      if (erased.length > 0) throw new MailroomError('GONE', 'This contact was erased');
    }
    const explicit = new Map(states.map((s) => [s.topicKey, s.state]));
    const locale = profile?.traits.locale;
    return {
      projectId,
      projectName: project.name,
      color: brand?.color ?? null,
      logo: brand?.logo ?? null,
      address,
      locale: typeof locale === 'string' ? locale : null,
      topics: topics
        .filter((t) => t.visibility === 'public')
        .map((t) => ({
          key: t.key,
          name: t.name,
          description: t.description,
          subscribed: topicStateOf(t, explicit.get(t.key)) === 'subscribed',
        })),
      unsubscribed: profile?.status === 'unsubscribed',
      csrf: signPreferenceCsrf(await getSecret(), token, clock.now()),
    };
  }

  return {
    async link(projectId, address) {
      const token = sealPreferenceToken(await getSecret(), { projectId, address });
      return `${linkBase(options)}/preferences/${token}`;
    },

    async open(token) {
      return page(token, await contactOf(token));
    },

    async save(token, input: PreferenceSave) {
      const fields = await contactOf(token);
      const before = await page(token, fields);
      if (!input.csrf || !verifyPreferenceCsrf(await getSecret(), token, input.csrf, clock.now())) {
        throw new MailroomError('FORBIDDEN', 'This form expired or did not come from this page: reload it');
      }
      const action = input.action ?? 'save';
      const base = {
        projectId: fields.projectId,
        address: fields.address,
        source: PREFERENCE_PAGE_SOURCE,
        meta: { ip: input.ip ?? null, userAgent: input.userAgent ?? null },
      };
      let change: Awaited<ReturnType<typeof changeConsent>>;
      if (action === 'unsubscribe-all') {
        change = await changeConsent(ctx, { ...base, status: 'unsubscribed' });
      } else if (action === 'resubscribe') {
        change = await changeConsent(ctx, { ...base, status: 'subscribed' });
      } else {
        // Only what differs from what the contact receives now becomes an explicit choice: a topic left
        // at its default stays there.
        const wanted = new Set(input.topics ?? []);
        const topics: Record<string, TopicState> = {};
        for (const t of before.topics) {
          const want = wanted.has(t.key);
          if (want !== t.subscribed) topics[t.key] = want ? 'subscribed' : 'unsubscribed';
        }
        change = await changeConsent(ctx, { ...base, topics });
      }
      const changed = change.topics.length > 0 || change.status !== undefined;
      return { ...(changed ? await page(token, fields) : before), changed };
    },
  };
}
