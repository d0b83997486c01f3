import type { OutboxWrite } from './event-records.js';

/**
 * The store's role for open and click tracking: each mailing's link map, and the hits the engine has
 * verified (a token it signed), with their human-or-machine verdict. Part of {@link Store}; the
 * conformance kit (`store-suite-tracking.ts`) checks it.
 */

/** One verified tracking hit, as the engine records it. */
export interface TrackingHit {
  /** A new id (the engine makes it); a click's row key. */
  id: string;
  kind: 'open' | 'click';
  projectId: string;
  mailingId: string;
  deliveryId: string;
  /** Clicks: the link's index in the mailing's link map; null for opens. */
  linkIndex: number | null;
  /** Clicks: the URL the click was sent to; null for opens. */
  url: string | null;
  /** Judged to come from a machine (a mail-privacy proxy, a link scanner), not a person. */
  machine: boolean;
  at: Date;
  /**
   * The hit's events and webhook messages (`email.opened` / `email.clicked`): written in the same
   * transaction as the hit, and only when the hit is new (a repeated open writes none).
   */
  outbox?: OutboxWrite;
}

/** Counts of a mailing's hits, people and machines apart. */
export interface TrackingSummary {
  /** Deliveries opened at least once, by class (a delivery opened by both counts in both). */
  opens: { human: number; machine: number };
  /** Deliveries with at least one click, by class. */
  clicks: { human: number; machine: number };
  /** Every click, by class. */
  clickTotals: { human: number; machine: number };
  /** Per link index: the deliveries that clicked it, by class. Links nobody clicked are absent. */
  links: Array<{ index: number; human: number; machine: number }>;
}

/** One delivery's tracking, for its page. */
export interface DeliveryTracking {
  /** Its opens by class: first and last time and how many. */
  opens: Array<{ machine: boolean; firstAt: Date; lastAt: Date; count: number }>;
  /** Its clicks, oldest first (at most 100). */
  clicks: Array<{ linkIndex: number; url: string; machine: boolean; at: Date }>;
}

/** The tracking role of a store. */
export interface TrackingStore {
  /**
   * Keep a mailing's link map (the trackable `href` values of its template, by index) if it has none yet;
   * return the one kept. Race guarantee: of concurrent calls for one mailing (processes included, when
   * `capabilities.multiProcess`), every one returns the same map: the first stored.
   */
  saveLinkMap(mailingId: string, links: readonly string[], now: Date): Promise<string[]>;
  /** A mailing's link map, or undefined when none was kept. */
  getLinkMap(mailingId: string): Promise<string[] | undefined>;
  /**
   * Record verified hits, atomically (all or none). An open is kept once per (delivery, machine) with a
   * count of repeats; every click is kept. Returns, in input order, whether each hit is new: an open that
   * is its delivery's first of its class (machine or not), and every click. A new hit's `outbox` is written
   * with it, in the same transaction; a hit that is not new writes no event.
   *
   * Race guarantee: of concurrent calls recording opens of one (delivery, machine), processes included,
   * exactly one hit is reported new.
   */
  recordTrackingHits(hits: readonly TrackingHit[]): Promise<boolean[]>;
  /** The counts of one mailing's hits (zeros when it has none). */
  trackingSummary(mailingId: string): Promise<TrackingSummary>;
  /** One delivery's opens and clicks. */
  deliveryTracking(deliveryId: string): Promise<DeliveryTracking>;
}
