import { MailroomApiError, type MailroomClient } from '@mailroom/client';
import type { AdminOperations } from './admin-operations.js';
import {
  apiKeyView,
  groupView,
  importView,
  mailingView,
  messageStatusView,
  profileDetailView,
  profileView,
  senderView,
  suppressionView,
  templateView,
} from './remote-resource-views.js';

/** How `remoteAdmin` runs a call: the server's refusals become the engine's errors. */
export type Translate = <T>(work: () => Promise<T>) => Promise<T>;

/** The operations of AdminOperations that the management routes (issue 26) serve. */
export type ResourceOperations = Pick<
  AdminOperations,
  | 'getMailing'
  | 'listBroadcasts'
  | 'getMessage'
  | 'senders'
  | 'suppressions'
  | 'keys'
  | 'audience'
  | 'templates'
  | 'storeTemplate'
>;

/** One page of a listing: the API's items and `nextCursor` as the engine's `{ items, next }`. */
function pageOf<W, V>(items: W[], next: string | null, view: (wire: W) => V) {
  return { items: items.map(view), next };
}

/**
 * The templates, senders, suppressions, keys, audience and status reads through the HTTP API, each the
 * route of the engine call the local side makes, answered as the engine's views.
 */
export function remoteResources(client: MailroomClient, call: Translate): ResourceOperations {
  const cursor = (page?: { after?: string; limit?: number }) => ({
    ...(page?.after ? { cursor: page.after } : {}),
    ...(page?.limit !== undefined ? { limit: page.limit } : {}),
  });
  return {
    getMailing: (ref) =>
      call(async () =>
        // A single message's ref reads through /messages, a broadcast's through /broadcasts.
        ref.startsWith('msg_')
          ? mailingView((await client.messages.get(ref)).message)
          : mailingView((await client.broadcasts.get(ref)).broadcast),
      ),
    listBroadcasts: (page) =>
      call(async () => {
        const answer = await client.broadcasts.list(cursor(page));
        return pageOf(answer.broadcasts, answer.nextCursor, mailingView);
      }),
    getMessage: (ref) => call(async () => messageStatusView((await client.messages.get(ref)).message)),
    senders: {
      list: (page) =>
        call(async () => {
          const answer = await client.senders.list(cursor(page));
          return pageOf(answer.senders, answer.nextCursor, senderView);
        }),
      add: (input) => call(async () => senderView((await client.senders.add(input)).sender)),
      remove: (address) =>
        call(async () => {
          await client.senders.remove(address);
        }),
    },
    suppressions: {
      list: (query) =>
        call(async () => {
          const answer = await client.suppressions.list({
            ...cursor(query),
            ...(query?.q ? { q: query.q } : {}),
          });
          return pageOf(answer.suppressions, answer.nextCursor, suppressionView);
        }),
      add: (input) =>
        call(async () => {
          // The document marks the defaulted `reason` required; the engine's default is `manual`.
          const body = { ...input, reason: input.reason ?? 'manual' };
          return suppressionView((await client.suppressions.add(body)).suppression);
        }),
      lift: (address) =>
        call(async () => {
          await client.suppressions.lift(address);
        }),
    },
    keys: {
      create: (options) =>
        call(async () => {
          const created = await client.keys.create({
            scope: options.scope,
            ...(options.domains ? { domains: [...options.domains] } : {}),
            mode: options.mode ?? 'live',
            ...(options.name !== undefined ? { name: options.name } : {}),
          });
          return { key: apiKeyView(created.key), secret: created.secret };
        }),
      list: () =>
        call(async () => {
          const keys = [];
          let after: string | undefined;
          do {
            const answer = await client.keys.list({ limit: 200, ...(after ? { cursor: after } : {}) });
            keys.push(...answer.keys.map(apiKeyView));
            after = answer.nextCursor ?? undefined;
          } while (after);
          return keys;
        }),
      revoke: (id) => call(async () => apiKeyView((await client.keys.revoke(id)).key)),
      rotate: (id, options) =>
        call(async () => {
          const rotated = await client.keys.rotate(
            id,
            options?.graceSeconds !== undefined ? { graceSeconds: options.graceSeconds } : undefined,
          );
          return {
            key: apiKeyView(rotated.key),
            secret: rotated.secret,
            previous: apiKeyView(rotated.previous),
          };
        }),
    },
    audience: {
      listGroups: () => call(async () => (await client.audience.listGroups()).groups.map(groupView)),
      createGroup: (input) =>
        call(async () =>
          groupView(
            (
              await client.audience.createGroup({
                ref: input.ref,
                ...(input.name ? { name: input.name } : {}),
              })
            ).group,
          ),
        ),
      listMembers: (ref, page) =>
        call(async () => {
          const answer = await client.audience.listMembers(ref, cursor(page));
          return pageOf(answer.profiles, answer.nextCursor, profileView);
        }),
      listProfiles: (search) =>
        call(async () => {
          const answer = await client.audience.listProfiles({
            ...cursor(search),
            ...(search?.q ? { q: search.q } : {}),
            ...(search?.label ? { label: search.label } : {}),
          });
          return pageOf(answer.profiles, answer.nextCursor, profileView);
        }),
      getProfile: (address) =>
        call(async () => profileDetailView((await client.audience.getProfile(address)).profile)),
      startImport: (request) =>
        call(async () =>
          importView(
            (
              await client.audience.startImport(
                request as Parameters<MailroomClient['audience']['startImport']>[0],
              )
            ).import,
          ),
        ),
      getImport: (id) => call(async () => importView((await client.audience.getImport(id)).import)),
    },
    templates: {
      list: (page) =>
        call(async () => {
          const answer = await client.templates.list(cursor(page));
          return pageOf(answer.templates, answer.nextCursor, templateView);
        }),
      get: (ref) => call(async () => templateView((await client.templates.get(ref)).template)),
      preview: (ref, sample) =>
        call(async () => {
          const body = (sample ?? {}) as Parameters<MailroomClient['templates']['preview']>[1];
          return client.templates.preview(ref, body);
        }),
    },
    storeTemplate: ({ ref, format, source, subject }) =>
      call(async () => {
        try {
          const created = await client.templates.create({
            ref,
            format,
            source,
            ...(subject ? { subject } : {}),
          });
          return templateView(created.template);
        } catch (error) {
          // The ref exists: this is its next version, as on the database's machine.
          if (!(error instanceof MailroomApiError) || error.code !== 'CONFLICT') throw error;
          const updated = await client.templates.update(ref, {
            format,
            source,
            ...(subject ? { subject } : {}),
          });
          return templateView(updated.template);
        }
      }),
  };
}
