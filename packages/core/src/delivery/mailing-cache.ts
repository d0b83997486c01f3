import { domainOf } from '../base/address-parts.js';
import type { PreparedContent } from '../render/index.js';
import type { MailingRecord } from '../store/records.js';
import { prepareTracked, type TrackedContent, type TrackingSetup } from '../tracking/tracking-links.js';
import { decodeAttachments, dkimFor, type MailingParts } from './compose-message.js';
import type { DeliveryContext } from './delivery-context.js';
import { prepareWithDerivedText } from './prepare-derived-text.js';

/** What a worker keeps per mailing: the record, its content parsed once, its per-mailing message parts. */
export interface MailingEntry {
  mailing: MailingRecord;
  prepared: TrackedContent<PreparedContent>;
  parts: MailingParts;
  /** How the mailing is tracked (opens, clicks), or null. */
  tracking: TrackingSetup | null;
}

const DEFAULT_SIZE = 256;

/**
 * Mailings by id, parsed once and reused for every recipient and batch (content is frozen at accept time,
 * so an entry never goes stale except for `status`, which the worker does not read from here).
 */
export class MailingCache {
  readonly #entries = new Map<string, Promise<MailingEntry | undefined>>();

  constructor(
    private readonly ctx: DeliveryContext,
    private readonly size = DEFAULT_SIZE,
  ) {}

  /** The entry of a mailing, loading and preparing it on first use. */
  get(id: string): Promise<MailingEntry | undefined> {
    const hit = this.#entries.get(id);
    if (hit) return hit;
    // The promise is cached, so concurrent deliveries of one mailing share one load and one parse.
    const loading = this.#load(id).catch((error: unknown) => {
      this.#entries.delete(id);
      throw error;
    });
    if (this.#entries.size >= this.size) this.#entries.delete(this.#entries.keys().next().value as string);
    this.#entries.set(id, loading);
    return loading;
  }

  async #load(id: string): Promise<MailingEntry | undefined> {
    const { store } = this.ctx;
    const mailing = await store.getMailingById(id);
    if (!mailing) return undefined;
    const sender = await store.findSender(mailing.projectId, mailing.sender.address);
    const tracking = (await this.ctx.tracking?.setupFor(mailing)) ?? null;
    // The sender identity's own key wins; else the key of the From domain, once its record was seen. A
    // mailing keeps the key it was loaded with: a rotation's grace period covers its last messages.
    const dkim =
      dkimFor(mailing.sender.address, sender?.dkim) ??
      (await this.ctx.domains.signingKey(mailing.projectId, domainOf(mailing.sender.address)));
    // Read with the mailing: a project that turns reply addresses on or off changes mailings loaded after.
    const replyDomain = (await store.getReceivingSettings(mailing.projectId))?.replyDomain ?? undefined;
    return {
      mailing,
      // Tracking marks the HTML template once; the text is still derived from the untracked one.
      prepared: prepareTracked(mailing.content, tracking, (content) =>
        // Text derived once per mailing where that is safe: per recipient it costs more than the render.
        prepareWithDerivedText(content, { strictVariables: this.ctx.strictVariables }),
      ),
      parts: { attachments: decodeAttachments(mailing), dkim, ...(replyDomain ? { replyDomain } : {}) },
      tracking,
    };
  }
}
