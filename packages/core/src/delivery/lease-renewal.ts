import { isStoreOutage } from '../base/errors.js';
import type { ClaimedDelivery } from '../store/records.js';
import type { WorkerParts } from './worker-parts.js';

/** Milliseconds between two renewals, at least: a short lease must not renew in a tight loop. */
const MIN_RENEW_EVERY_MS = 200;

/**
 * Renews the leases of `claimed` every third of the lease (at least every 200 ms) until the returned
 * timer is cleared: a slow relay must not let leases lapse mid-batch. A failed renewal is logged (an
 * outage is logged once by the engine) and the next one tries again.
 */
export function renewLeasesEvery(
  { ctx, opts, store }: WorkerParts,
  claimed: readonly ClaimedDelivery[],
): ReturnType<typeof setInterval> {
  const { clock, logger } = ctx;
  return setInterval(
    () => {
      const until = new Date(clock.now().getTime() + opts.leaseMs);
      const leases = claimed.map((d) => ({ id: d.id, leaseToken: d.leaseToken }));
      store.renewLeases(leases, until).catch((err: unknown) => {
        if (!isStoreOutage(err)) logger.warn({ err }, 'lease renewal failed');
      });
    },
    Math.max(MIN_RENEW_EVERY_MS, opts.leaseMs / 3),
  );
}
