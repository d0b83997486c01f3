import { publicBaseUrl } from '../base/base-url.js';
import { MailroomError } from '../base/errors.js';
import { newId } from '../base/ids.js';
import { changeConsent } from '../consent/consent-change.js';
import type { AuthContext } from '../context/auth-context.js';
import type { BaseContext } from '../context/base-context.js';
import { installationSecret } from '../context/installation-secret.js';
import { normalizeAddress } from '../request/index.js';
import type { ConsentRecord, TopicRecord } from '../store/consent-records.js';
import type { EventType } from '../store/event-records.js';
import type { AudienceGroupRecord } from '../store/records.js';
import type { FormRecord, SignupRecord } from '../store/signup-records.js';
import type { SignupEvents } from './signup-events.js';
import { confirmationRequest } from './signup-message.js';
import { parseSignupBody } from './signup-request.js';
import { parseSignupToken, signSignupToken, verifySignupToken } from './signup-token.js';
import type { ConfirmationTarget, MailroomSignups, SignupMeta, SignupOptions } from './signup-types.js';

/** The installation setting that holds the generated secret when none is configured. */
export const SIGNUP_SECRET_SETTING = 'signup-secret';
/** How long a confirmation link works by default: 7 days. */
export const DEFAULT_CONFIRM_TTL_MS = 7 * 24 * 3600_000;
/** A pending address is mailed again at most this often by default: 10 minutes. */
export const DEFAULT_RESEND_INTERVAL_MS = 10 * 60_000;
/** Secrets shorter than this are refused: the MAC is only as strong as its key. */
const MIN_SECRET_LENGTH = 16;
/** The longest user agent kept in a record. */
const MAX_USER_AGENT = 512;

/** What signups need besides the context: a transactional send, as `mailroom.send` does it. */
export interface SignupDeps {
  send(auth: AuthContext, body: unknown): Promise<unknown>;
  /** The unsubscribe option's base URL, the default of `signup.baseUrl`. */
  fallbackBaseUrl?: string | (() => string);
}

/** One signup with everything it points at (a form removed later leaves its links unusable). */
interface Resolved {
  signup: SignupRecord;
  form: FormRecord;
  topic: TopicRecord | null;
  group: AudienceGroupRecord | null;
  projectName: string;
  /** The project's brand, for the link's pages. */
  brand: { color: string | null; logo: string | null };
  /** The contact's `locale` trait, if its profile has one. */
  locale: string | null;
  expired: boolean;
  /** The contact's explicit state for the form's topic, if any. */
  topicState: string | null;
}

/**
 * The public side of signup forms (issue 38): `submit` (the form's POST), and the confirmation links of
 * double opt-in (`resolve` for the page's GET, `confirm` for its button's POST, `resend` for an expired
 * one). Every change is a consent change with the form's source (`form:<ref>`), the client's IP and user
 * agent, and the wording shown (the form's consent text and its version).
 */
export function createSignups(
  ctx: BaseContext,
  deps: SignupDeps,
  options: SignupOptions = {},
): MailroomSignups {
  const { store, clock, logger } = ctx;
  const events = ctx.events.view<SignupEvents>();
  if (options.secret !== undefined && options.secret.length < MIN_SECRET_LENGTH) {
    throw invalidOption('secret', `The signup secret needs at least ${MIN_SECRET_LENGTH} characters`);
  }
  const ttlMs = options.confirmTtlMs ?? DEFAULT_CONFIRM_TTL_MS;
  const resendMs = options.resendIntervalMs ?? DEFAULT_RESEND_INTERVAL_MS;
  for (const [field, value] of [
    ['confirmTtlMs', ttlMs],
    ['resendIntervalMs', resendMs],
  ] as const) {
    if (!(Number.isSafeInteger(value) && value >= 0)) {
      throw invalidOption(field, `signup.${field} must be a whole number of milliseconds`);
    }
  }
  const getSecret = installationSecret(ctx, SIGNUP_SECRET_SETTING, options.secret);
  const notFound = () => new MailroomError('NOT_FOUND', 'Unknown or invalid confirmation link');

  function baseUrl(): string {
    const given = options.baseUrl ?? deps.fallbackBaseUrl;
    if (given === undefined) {
      throw new MailroomError(
        'VALIDATION_FAILED',
        'Double opt-in needs signup.baseUrl (or unsubscribe.baseUrl)',
      );
    }
    return publicBaseUrl(typeof given === 'function' ? given() : given, 'signup');
  }

  async function findForm(ref: string): Promise<FormRecord> {
    await ctx.ready();
    const form = await store.findForm(ref);
    if (!form) throw new MailroomError('NOT_FOUND', 'Unknown form');
    return form;
  }

  async function targetsOf(form: FormRecord) {
    const [topic, group] = await Promise.all([
      form.topicKey === null ? null : store.getTopic(form.projectId, form.topicKey),
      form.groupRef === null ? null : store.getGroup(form.projectId, form.groupRef),
    ]);
    return { topic: topic ?? null, group: group ?? null };
  }

  async function sendConfirmation(form: FormRecord, signup: SignupRecord, wording: string): Promise<void> {
    const project = await store.getProject(form.projectId);
    if (!project) return;
    const expiresAt = clock.now().getTime() + ttlMs;
    const token = signSignupToken(await getSecret(), {
      projectId: form.projectId,
      signupId: signup.id,
      address: signup.address,
      expiresAt,
    });
    const request = confirmationRequest(form, signup.address, {
      confirm_url: `${baseUrl()}/confirm/${token}`,
      project_name: project.name,
      form_name: form.name,
      consent_text: wording,
      valid_days: Math.max(1, Math.round(ttlMs / (24 * 3600_000))),
    });
    await deps.send({ project, mode: 'live' }, request);
  }

  /** A record-only consent change (a group signup: no topic state moves), with its event. */
  async function recordOnly(
    form: FormRecord,
    address: string,
    change: 'signup' | 'confirm',
    state: string,
    wording: string,
    meta: SignupMeta,
    event: { type: EventType; data: Record<string, unknown> },
  ): Promise<void> {
    const now = clock.now();
    const record: ConsentRecord = {
      id: newId('cns', now.getTime()),
      projectId: form.projectId,
      address,
      at: now,
      change,
      topicKey: null,
      state,
      source: `form:${form.ref}`,
      ip: meta.ip ?? null,
      userAgent: meta.userAgent?.slice(0, MAX_USER_AGENT) ?? null,
      mailingRef: null,
      wording,
    };
    const keys = { mailingRef: null, deliveryId: null, address };
    const outbox = await ctx.outbox.event(form.projectId, event.type, now, keys, event.data);
    await store.writeConsent({ projectId: form.projectId, address, records: [record], now }, outbox);
  }

  async function resolveToken(token: string): Promise<Resolved> {
    await ctx.ready();
    const parsed = parseSignupToken(token);
    if (!parsed) throw notFound();
    const signup = await store.getSignup(parsed.signupId);
    if (!signup) throw notFound();
    const fields = {
      projectId: signup.projectId,
      signupId: signup.id,
      address: signup.address,
      expiresAt: parsed.expiresAt,
    };
    if (!verifySignupToken(await getSecret(), parsed, fields)) throw notFound();
    const [form, project, brand, profile] = await Promise.all([
      store.findForm(signup.formRef),
      store.getProject(signup.projectId),
      store.getProjectBrand(signup.projectId),
      store.getProfile(signup.projectId, signup.address),
    ]);
    if (!form || !project || form.projectId !== signup.projectId) throw notFound();
    const { topic, group } = await targetsOf(form);
    const states = topic ? await store.findTopicStates(form.projectId, topic.key, [signup.address]) : [];
    return {
      signup,
      form,
      topic,
      group,
      projectName: project.name,
      brand: { color: brand?.color ?? null, logo: brand?.logo ?? null },
      locale: typeof profile?.traits.locale === 'string' ? profile.traits.locale : null,
      expired: clock.now().getTime() > parsed.expiresAt,
      topicState: states[0]?.state ?? null,
    };
  }

  /** Whether the link still has something to confirm: a pending signup, or the topic pending again. */
  const confirmable = (r: Resolved) => r.signup.status === 'pending' || r.topicState === 'pending';

  function view(r: Resolved, after?: 'confirmed'): ConfirmationTarget {
    const state = after ?? (confirmable(r) ? (r.expired ? 'expired' : 'pending') : 'confirmed');
    return {
      projectName: r.projectName,
      address: r.signup.address,
      topicName: r.topic?.name ?? null,
      groupName: r.group ? (r.group.name ?? r.group.ref) : null,
      state,
      color: r.brand.color,
      logo: r.brand.logo,
      locale: r.locale,
    };
  }

  const wordingOf = (form: FormRecord, version: number) => {
    const text = form.consentTexts.find((t) => t.version === version) ?? form.consentTexts.at(-1);
    return text ? `v${text.version}: ${text.text}` : '';
  };

  /** Signups answered and not written yet. */
  const inFlight = new Set<Promise<void>>();

  async function finishSignup(
    form: FormRecord,
    address: string,
    version: number,
    wording: string,
    meta: SignupMeta,
  ): Promise<void> {
    const { topic, group } = await targetsOf(form);
    // A form whose group or topic was removed since: nothing to join (the same for every address).
    if ((form.topicKey !== null && !topic) || (form.groupRef !== null && !group)) {
      logger.warn({ form: form.ref }, 'signup form points at a removed group or topic; signup dropped');
      return;
    }
    const now = clock.now();
    const id = newId('sgn', now.getTime());
    const signup = await store.openSignup({
      id,
      projectId: form.projectId,
      formRef: form.ref,
      address,
      consentVersion: version,
      status: 'pending',
      createdAt: now,
      sentAt: null,
      confirmedAt: null,
    });
    const source = `form:${form.ref}`;
    const base = {
      projectId: form.projectId,
      address,
      source,
      meta,
      wording,
      topicChange: 'signup' as const,
    };
    const eventData = (pending: boolean) => ({
      address,
      form_ref: form.ref,
      topic: form.topicKey,
      group: form.groupRef,
      pending,
    });

    // Double opt-in when the topic or the group asks for it: the whole signup waits for the link.
    const double = (topic?.doubleOptIn ?? false) || (group?.doubleOptIn ?? false);
    if (!double) {
      if (topic) {
        await changeConsent(ctx, {
          ...base,
          topics: { [topic.key]: 'subscribed' },
          events: [{ type: 'contact.subscribed', data: eventData(false) }],
        });
      }
      const joined = await store.confirmSignup(signup.id, now, group?.id ?? null);
      if (!topic && joined) {
        await recordOnly(form, address, 'signup', 'subscribed', wording, meta, {
          type: 'contact.subscribed',
          data: eventData(false),
        });
      }
      if (joined || topic)
        events.emit('contactSubscribed', {
          projectId: form.projectId,
          address,
          formRef: form.ref,
          pending: false,
        });
      return;
    }

    let pendingNow: boolean;
    if (topic) {
      const [current] = await store.findTopicStates(form.projectId, topic.key, [address]);
      // Already in the topic: nothing to confirm, nothing to mail (the answer says nothing of it); the
      // form's group, if any, is joined on that consent.
      if (current?.state === 'subscribed') {
        if (group) await store.confirmSignup(signup.id, now, group.id);
        return;
      }
      const changed = await changeConsent(ctx, {
        ...base,
        topics: { [topic.key]: 'pending' },
        events: [{ type: 'contact.subscribed', data: eventData(true) }],
      });
      pendingNow = changed.topics.length > 0;
    } else {
      // A group's double opt-in: the membership waits for the link (confirmSignup adds it).
      if (signup.status === 'confirmed') return;
      // Recorded once, when the signup is made; a repeat only mails the link again (at most once an interval).
      pendingNow = signup.id === id;
      if (pendingNow) {
        await recordOnly(form, address, 'signup', 'pending', wording, meta, {
          type: 'contact.subscribed',
          data: eventData(true),
        });
      }
    }
    if (pendingNow) {
      events.emit('contactSubscribed', {
        projectId: form.projectId,
        address,
        formRef: form.ref,
        pending: true,
      });
    }
    if (await store.claimSignupSend(signup.id, now, new Date(now.getTime() - resendMs))) {
      await sendConfirmation(form, signup, wording);
    }
  }

  return {
    async allowedOrigins(formRef) {
      return [...(await findForm(formRef)).allowedOrigins];
    },

    async brand(formRef) {
      const form = await findForm(formRef);
      const [project, brand] = await Promise.all([
        store.getProject(form.projectId),
        store.getProjectBrand(form.projectId),
      ]);
      return { projectName: project?.name ?? '', color: brand?.color ?? null, logo: brand?.logo ?? null };
    },

    async submit(formRef, body, meta = {}) {
      const form = await findForm(formRef);
      const input = parseSignupBody(body);
      // A filled honeypot is a bot: the same answer as a signup, and nothing done.
      if (input.honeypot) return;
      const address = normalizeAddress(input.email);
      const version = form.consentTexts.some((t) => t.version === input.consentVersion)
        ? (input.consentVersion as number)
        : (form.consentTexts.at(-1)?.version ?? 0);
      const wording = wordingOf(form, version);
      // The answer goes now; the work follows, so its time does not tell a known address from a new one.
      const work = finishSignup(form, address, version, wording, meta).catch((error: unknown) => {
        logger.error({ err: error, form: form.ref }, 'signup failed after its answer');
      });
      inFlight.add(work);
      void work.finally(() => inFlight.delete(work));
    },

    async settled() {
      while (inFlight.size > 0) await Promise.all([...inFlight]);
    },

    async resolve(token) {
      return view(await resolveToken(token));
    },

    async confirm(token, meta = {}) {
      const r = await resolveToken(token);
      if (r.expired || !confirmable(r)) return view(r);
      const now = clock.now();
      const won = await store.confirmSignup(r.signup.id, now, r.group?.id ?? null);
      const wording = wordingOf(r.form, r.signup.consentVersion);
      const data = {
        address: r.signup.address,
        form_ref: r.form.ref,
        topic: r.form.topicKey,
        group: r.form.groupRef,
      };
      let changed = won;
      if (r.topic) {
        const result = await changeConsent(ctx, {
          projectId: r.form.projectId,
          address: r.signup.address,
          topics: { [r.topic.key]: 'subscribed' },
          source: `form:${r.form.ref}`,
          meta,
          wording,
          topicChange: 'confirm',
          events: [{ type: 'contact.confirmed', data }],
        });
        changed = result.topics.length > 0;
      } else if (won) {
        await recordOnly(r.form, r.signup.address, 'confirm', 'subscribed', wording, meta, {
          type: 'contact.confirmed',
          data,
        });
      }
      if (changed) {
        events.emit('contactConfirmed', {
          projectId: r.form.projectId,
          address: r.signup.address,
          formRef: r.form.ref,
        });
      }
      return view(r, 'confirmed');
    },

    async resend(token) {
      const r = await resolveToken(token);
      if (!confirmable(r)) return view(r);
      const now = clock.now();
      if (await store.claimSignupSend(r.signup.id, now, new Date(now.getTime() - resendMs))) {
        await sendConfirmation(r.form, r.signup, wordingOf(r.form, r.signup.consentVersion));
      }
      return view(r);
    },
  };
}

function invalidOption(field: string, message: string): MailroomError {
  return new MailroomError('VALIDATION_FAILED', message, {
    issues: [{ code: 'custom', path: ['signup', field], message }],
  });
}
