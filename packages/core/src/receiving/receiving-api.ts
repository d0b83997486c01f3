/**
 * `mailroom.receiving`: a project's routes and received messages (every call scoped to the caller's
 * project), and the listener's two questions (does a route take this address; take this message).
 */
import { z } from 'zod';
import { MailroomError } from '../base/errors.js';
import { newId } from '../base/ids.js';
import type { AuthContext } from '../context/auth-context.js';
import type { BaseContext } from '../context/base-context.js';
import type { ResolveAuth } from '../context/capability.js';
import { toValidationIssues } from '../request/index.js';
import type { ReceivingRouteRecord } from '../store/receiving-store.js';
import { attachmentUrls } from './attachment-urls.js';
import type { ParsedReceived } from './parse-received.js';
import { receiveMail } from './receive-mail.js';
import type { ReceivingEvents } from './receiving-events.js';
import type { ReceivingOptions } from './receiving-options.js';
import { receivingReads } from './receiving-reads.js';
import { receivingDefaults, settingsView, updateSettings } from './receiving-settings.js';
import type {
  InboundMail,
  MailroomReceiving,
  ReceivingEnvelope,
  ReceivingRouteView,
} from './receiving-types.js';
import { matchRoute, ROUTE_PATTERN, splitAddress } from './route-match.js';

const DOMAIN = /^(?=.{1,253}$)([a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63}$/;

const ROUTE_SCHEMA = z.strictObject({
  domain: z
    .string()
    .trim()
    .transform((d) => d.toLowerCase())
    .pipe(z.string().regex(DOMAIN, 'A domain name (inbound.example.com)')),
  pattern: z
    .string()
    .trim()
    .regex(ROUTE_PATTERN, 'A local part (support), a prefix with a wildcard (reply+*) or * (catch-all)'),
  destination: z.discriminatedUnion('kind', [
    z.strictObject({ kind: z.literal('webhook'), endpointId: z.string().min(1).max(64) }),
    z.strictObject({ kind: z.literal('handler') }),
    z.strictObject({ kind: z.literal('store') }),
  ]),
});

/** A route as the API shows it. */
export function routeView(r: ReceivingRouteRecord): ReceivingRouteView {
  return {
    id: r.id,
    domain: r.domain,
    pattern: r.pattern,
    destination: r.destination,
    created_at: r.createdAt.toISOString(),
  };
}

/** Builds `mailroom.receiving`. */
export function createReceivingApi(
  ctx: BaseContext,
  resolveAuth: ResolveAuth,
  options: ReceivingOptions,
  parser: {
    parse(raw: Uint8Array, envelope: ReceivingEnvelope): Promise<ParsedReceived>;
    warm(): Promise<void>;
  },
): MailroomReceiving {
  const { parse } = parser;
  const { store, clock } = ctx;
  const projectOf = async (auth: string | AuthContext) => (await resolveAuth(auth)).project.id;
  const events = ctx.events.view<ReceivingEvents>();
  const defaults = receivingDefaults(options);
  const urls = attachmentUrls(ctx, options);
  const reads = receivingReads(ctx);
  // The API's URLs count from the read: a message listed a month later still has working links.
  const fresh = async (stored: Record<string, unknown>): Promise<InboundMail> => {
    const mail = stored as unknown as InboundMail;
    const attachments = await urls.sign(mail.project_id, mail.id, mail.attachments, clock.now());
    return { ...mail, attachments };
  };

  return {
    async addRoute(auth, input) {
      const projectId = await projectOf(auth);
      const result = ROUTE_SCHEMA.safeParse(input);
      if (!result.success) {
        throw new MailroomError('VALIDATION_FAILED', 'Invalid receiving route', {
          issues: toValidationIssues(result.error.issues),
        });
      }
      const { domain, pattern, destination } = result.data;
      if (destination.kind === 'webhook') {
        const endpoint = await store.getWebhookEndpoint(destination.endpointId);
        if (!endpoint || endpoint.projectId !== projectId) {
          throw new MailroomError('NOT_FOUND', `Webhook endpoint ${destination.endpointId} not found`);
        }
      }
      const route: ReceivingRouteRecord = {
        id: newId('rte', clock.now().getTime()),
        projectId,
        domain,
        pattern,
        destination,
        createdAt: clock.now(),
      };
      try {
        await store.createReceivingRoute(route);
        reads.forget();
      } catch (error) {
        // Receiving domains are shared by the server: the store's conflict may name the project that owns
        // the address, which is not the caller's to learn.
        if (error instanceof MailroomError && error.code === 'CONFLICT') {
          throw new MailroomError('CONFLICT', `${pattern}@${domain} is already routed`);
        }
        throw error;
      }
      return routeView(route);
    },

    async listRoutes(auth) {
      return (await store.listReceivingRoutes(await projectOf(auth))).map(routeView);
    },

    async removeRoute(auth, id) {
      const removed = await store.deleteReceivingRoute(await projectOf(auth), id);
      reads.forget();
      if (!removed) throw new MailroomError('NOT_FOUND', `Receiving route ${id} not found`);
    },

    async listMessages(auth, page = {}) {
      const projectId = await projectOf(auth);
      const limit = Math.min(Math.max(page.limit ?? 50, 1), 100);
      const rows = await store.listReceivedMessages(projectId, {
        before: page.before ?? null,
        limit: limit + 1,
      });
      const items = await Promise.all(rows.slice(0, limit).map((r) => fresh(r.message)));
      return { items, next: rows.length > limit ? (items.at(-1)?.id ?? null) : null };
    },

    async getMessage(auth, id) {
      const found = await store.getReceivedMessage(await projectOf(auth), id);
      if (!found) throw new MailroomError('NOT_FOUND', `Received message ${id} not found`);
      return fresh(found.message);
    },

    async getSettings(auth) {
      return settingsView(await store.getReceivingSettings(await projectOf(auth)), defaults);
    },

    async updateSettings(auth, input) {
      const updated = await updateSettings(ctx, await projectOf(auth), input);
      reads.forget();
      return settingsView(updated, defaults);
    },

    attachment: (token) => urls.open(token),

    maxMessageBytes: defaults.maxMessageBytes,

    async routes(address) {
      await ctx.ready();
      const parts = splitAddress(address);
      if (!parts) return false;
      return matchRoute(await reads.routes(parts.domain), parts.local) !== undefined;
    },

    warm: () => parser.warm(),

    receive: (raw, envelope) =>
      receiveMail({ ctx, options, parse, events, defaults, urls, reads }, raw, envelope),
  };
}
