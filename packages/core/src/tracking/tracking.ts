import { publicBaseUrl } from '../base/base-url.js';
import { MailroomError } from '../base/errors.js';
import { newId } from '../base/ids.js';
import type { BaseContext } from '../context/base-context.js';
import { installationSecret } from '../context/installation-secret.js';
import type { MailingRecord } from '../store/records.js';
import type { TrackingHit } from '../store/store.js';
import type { TrackingEvents } from './tracking-events.js';
import { createHitRecorder, type HitRecorder } from './tracking-hits.js';
import { clickDestination, linkMapOf, type TrackingSetup } from './tracking-links.js';
import { isMachineClick, isMachineOpen } from './tracking-machine.js';
import type { TrackingHitMeta, TrackingOptions } from './tracking-options.js';
import { MIN_TRACKING_SECRET_LENGTH, parseTrackingToken, verifyTrackingToken } from './tracking-token.js';

/** The installation setting that holds the generated tracking secret when none is configured. */
export const TRACKING_SECRET_SETTING = 'tracking-secret';

/** @see TrackingOptions.scannerWindowMs */
export const DEFAULT_SCANNER_WINDOW_MS = 10_000;

/** The engine's open and click tracking. Internal; the engine exposes `trackOpen` and `trackClick`. */
export interface Tracking {
  /** How a mailing is tracked, for the worker (null: not tracked). Stores its link map on first use. */
  setupFor(mailing: MailingRecord): Promise<TrackingSetup | null>;
  /** Resolve a click: the URL to redirect to; the hit is written behind. `NOT_FOUND` for any bad token. */
  click(token: string, meta: TrackingHitMeta): Promise<string>;
  /** Verify an open; the hit is written behind. `NOT_FOUND` for any bad token. */
  open(token: string, meta: TrackingHitMeta): Promise<void>;
  /** The mailing's link map (for views), or undefined. */
  links(mailingId: string): Promise<string[] | undefined>;
  /** Write the hits waiting in this process now. */
  flush(): Promise<void>;
  close(): Promise<void>;
}

interface MailingInfo {
  projectId: string;
  ref: string;
  kind: MailingRecord['kind'];
  links: string[];
}

const MAILINGS_CACHED = 1024;

/**
 * Tracking as configured by `options`. Tokens are signed with `options.secret` or with a secret generated
 * once and kept in the store (like the unsubscribe key), so every process signs and verifies alike.
 */
export function createTracking(ctx: BaseContext, options: TrackingOptions): Tracking {
  const { store, clock } = ctx;
  const events = ctx.events.view<TrackingEvents>();
  if (options.secret !== undefined && options.secret.length < MIN_TRACKING_SECRET_LENGTH) {
    throw invalid('secret', `The tracking secret needs at least ${MIN_TRACKING_SECRET_LENGTH} characters`);
  }
  const scannerWindowMs = options.scannerWindowMs ?? DEFAULT_SCANNER_WINDOW_MS;
  if (!(Number.isFinite(scannerWindowMs) && scannerWindowMs >= 0)) {
    throw invalid('scannerWindowMs', 'tracking.scannerWindowMs must be a number of milliseconds');
  }
  if (typeof options.baseUrl === 'string') baseOf(options.baseUrl);
  const mailings = new Map<string, Promise<MailingInfo | undefined>>();

  const getSecret = installationSecret(ctx, TRACKING_SECRET_SETTING, options.secret);

  /** A mailing's project, ref and link map, read once per process (they never change). */
  const infoOf = (mailingId: string): Promise<MailingInfo | undefined> => {
    const hit = mailings.get(mailingId);
    if (hit) return hit;
    const loading = (async () => {
      const [mailing, links] = await Promise.all([
        store.getMailingById(mailingId),
        store.getLinkMap(mailingId),
      ]);
      return mailing
        ? { projectId: mailing.projectId, ref: mailing.ref, kind: mailing.kind, links: links ?? [] }
        : undefined;
    })();
    // Only found mailings stay cached: a token is verified before its mailing is read, so misses are rare.
    loading.then(
      (info) => info === undefined && mailings.delete(mailingId),
      () => mailings.delete(mailingId),
    );
    if (mailings.size >= MAILINGS_CACHED) mailings.delete(mailings.keys().next().value as string);
    mailings.set(mailingId, loading);
    return loading;
  };

  const recorder: HitRecorder = createHitRecorder(ctx, {
    scannerWindowMs,
    flushMs: options.flushMs ?? 250,
    async outboxOf(hit) {
      const [info, delivery] = await Promise.all([infoOf(hit.mailingId), store.getDelivery(hit.deliveryId)]);
      if (!info || !delivery) return undefined;
      return ctx.outbox.event(
        hit.projectId,
        hit.kind === 'open' ? 'email.opened' : 'email.clicked',
        hit.at,
        { mailingRef: info.ref, deliveryId: delivery.id, address: delivery.address },
        {
          mailing: { ref: info.ref, kind: info.kind },
          delivery: {
            id: delivery.id,
            message_id: delivery.messageId,
            address: delivery.address,
            attempts: delivery.attempts,
          },
          machine: hit.machine,
          ...(hit.url === null ? {} : { url: hit.url }),
        },
      );
    },
    onRecorded(hits) {
      if (!events.has('tracking')) return;
      for (const hit of hits) {
        void infoOf(hit.mailingId).then((info) =>
          events.emit('tracking', {
            type: hit.kind === 'open' ? 'email.opened' : 'email.clicked',
            projectId: hit.projectId,
            mailingRef: info?.ref ?? '',
            deliveryId: hit.deliveryId,
            url: hit.url,
            machine: hit.machine,
            at: hit.at,
          }),
        );
      }
    },
  });

  const notFound = () => new MailroomError('NOT_FOUND', 'Unknown or invalid tracking link');

  /** The token's fields once its MAC and its mailing check out; `NOT_FOUND` otherwise, nothing read. */
  async function verified(kind: 'open' | 'click', token: string) {
    const parsed = parseTrackingToken(kind, token);
    if (!parsed) throw notFound();
    if (!verifyTrackingToken(await getSecret(), parsed)) throw notFound();
    const info = await infoOf(parsed.mailingId);
    // Signed for another project than the mailing's: never made by this engine.
    if (!info || info.projectId !== parsed.projectId) throw notFound();
    return { parsed, info };
  }

  function hitOf(
    kind: 'open' | 'click',
    parsed: { projectId: string; mailingId: string; deliveryId: string },
    machine: boolean,
    link: { index: number; url: string } | null,
  ): TrackingHit {
    const at = clock.now();
    return {
      id: newId('hit', at.getTime()),
      kind,
      projectId: parsed.projectId,
      mailingId: parsed.mailingId,
      deliveryId: parsed.deliveryId,
      linkIndex: link?.index ?? null,
      url: link?.url ?? null,
      machine,
      at,
    };
  }

  return {
    async setupFor(mailing) {
      const html = mailing.content.html;
      if (html === null) return null;
      const track = mailing.content.track ?? {};
      const opens = options.opens === true && track.opens !== false;
      const clicks = options.clicks === true && track.clicks !== false;
      if (!opens && !clicks) return null;
      const [key, links] = await Promise.all([
        getSecret(),
        clicks ? store.saveLinkMap(mailing.id, linkMapOf(html), clock.now()) : Promise.resolve([]),
      ]);
      return {
        baseUrl: baseOf(typeof options.baseUrl === 'function' ? options.baseUrl() : options.baseUrl),
        secret: key,
        projectId: mailing.projectId,
        mailingId: mailing.id,
        opens,
        clicks,
        textLinks: track.textLinks === true,
        links,
      };
    },

    async click(token, meta) {
      const { parsed, info } = await verified('click', token);
      const index = parsed.index as number;
      const url = clickDestination(info.links, index, parsed.values);
      if (url === undefined) throw notFound();
      recorder.add({
        hit: hitOf('click', parsed, isMachineClick(meta), { index, url }),
        sentAtMs: parsed.sentAt * 1000,
        linkCount: info.links.length,
      });
      return url;
    },

    async open(token, meta) {
      const { parsed } = await verified('open', token);
      recorder.add({
        hit: hitOf('open', parsed, isMachineOpen(meta), null),
        sentAtMs: parsed.sentAt * 1000,
        linkCount: 0,
      });
    },

    async links(mailingId) {
      return (await infoOf(mailingId))?.links;
    },

    flush: () => recorder.flush(),
    close: () => recorder.close(),
  };
}

function baseOf(baseUrl: string): string {
  return publicBaseUrl(baseUrl, 'tracking');
}

function invalid(field: string, message: string): MailroomError {
  return new MailroomError('VALIDATION_FAILED', message, {
    issues: [{ code: 'custom', path: ['tracking', field], message }],
  });
}
