import { MailroomError } from '../base/errors.js';
import { type Capability, storeRole } from '../context/capability.js';
import { normalizeAddress } from '../request/index.js';
import type { TrackingStore } from '../store/tracking-store.js';
import { createTracking, type Tracking } from './tracking.js';
import type { TrackingEngineOptions, TrackingFacade } from './tracking-facade.js';
import { trackingView } from './tracking-view.js';

/** What tracking lends the delivery loop: how each mailing is tracked, when the engine tracks. */
export interface TrackingProvides {
  tracking?: Tracking;
}

/**
 * Open and click tracking, plugged into the engine through the capability seam: option `tracking`, the
 * store's `TrackingStore` role, the `tracking` event, the four facade methods, and the hits it writes
 * behind (flushed at close).
 */
export const trackingCapability: Capability<TrackingEngineOptions, TrackingFacade, TrackingProvides> = {
  name: 'tracking',
  storeRole: storeRole<TrackingStore>()(
    'saveLinkMap',
    'getLinkMap',
    'recordTrackingHits',
    'trackingSummary',
    'deliveryTracking',
  ),
  create({ ctx, findMailing }, options) {
    const tracking = options.tracking ? createTracking(ctx, options.tracking) : undefined;
    const noTracking = () => new MailroomError('NOT_FOUND', 'Unknown or invalid tracking link');
    const facade: TrackingFacade = {
      async trackClick(token, meta = {}) {
        if (!tracking) throw noTracking();
        return tracking.click(token, meta);
      },
      async trackOpen(token, meta = {}) {
        if (!tracking) throw noTracking();
        await tracking.open(token, meta);
      },
      async getTracking(auth, ref, viewOptions) {
        return trackingView(ctx, await findMailing(auth, ref), viewOptions?.limit);
      },
      async getDeliveryTracking(auth, ref, address) {
        const mailing = await findMailing(auth, ref);
        const delivery = await ctx.store.findDelivery(mailing.id, normalizeAddress(address));
        if (!delivery) throw new MailroomError('NOT_FOUND', `${ref} has no delivery to ${address}`);
        return ctx.store.deliveryTracking(delivery.id);
      },
    };
    return {
      facade,
      provides: tracking ? { tracking } : {},
      close: async () => {
        await tracking?.close();
      },
    };
  },
};
