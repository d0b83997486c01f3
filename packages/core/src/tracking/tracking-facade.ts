import type { AuthContext } from '../context/auth-context.js';
import type { DeliveryTracking } from '../store/store.js';
import type { TrackingHitMeta, TrackingOptions, TrackingView } from './tracking-options.js';

/** The engine's options of open and click tracking (`MailroomOptions` extends it). */
export interface TrackingEngineOptions {
  /**
   * Open and click tracking, off unless configured (each of `opens` and `clicks` too). A mailing can turn
   * either off with `options.track`. See docs/tracking.md.
   * @example { baseUrl: 'https://mail.example.com/api', opens: true, clicks: true }
   */
  tracking?: TrackingOptions;
}

/** What tracking adds to the engine (`Mailroom` extends it). */
export interface TrackingFacade {
  /**
   * A click on a tracked link: the URL to redirect to (taken from the mailing, never from the request).
   * The hit is recorded behind, in batches. `NOT_FOUND` for a forged, altered or unknown token, or when
   * the engine does not track.
   */
  trackClick(token: string, meta?: TrackingHitMeta): Promise<string>;
  /** A load of the open pixel; recorded behind. `NOT_FOUND` as for `trackClick`. */
  trackOpen(token: string, meta?: TrackingHitMeta): Promise<void>;
  /** A mailing's open and click figures (zeros when it is not tracked); `NOT_FOUND` for another project's. */
  getTracking(auth: string | AuthContext, ref: string, options?: { limit?: number }): Promise<TrackingView>;
  /**
   * One delivery's opens (first and last, how many, by class) and clicks (at most 100, oldest first);
   * `NOT_FOUND` when the mailing has no delivery to that address.
   */
  getDeliveryTracking(auth: string | AuthContext, ref: string, address: string): Promise<DeliveryTracking>;
}
