import type { ClaimedWebhookMessage } from '../store/event-records.js';

/**
 * One endpoint's share of a webhook sender: the messages the sender holds for it, its POSTs in flight,
 * its circuit. Each endpoint has its own, so that a slow or dead endpoint only ever holds its own share.
 */
export interface Lane {
  readonly endpointId: string;
  /** Held messages of priority 0, waiting for a POST, oldest first. */
  readonly urgent: ClaimedWebhookMessage[];
  /** Held messages of priority 1 (a broadcast's events), waiting for a POST. */
  readonly queue: ClaimedWebhookMessage[];
  /** POSTs in flight. */
  inFlight: number;
  /** Failed attempts in a row. */
  failures: number;
  /** Epoch milliseconds until which the circuit is open; 0 while closed. Once past: half open. */
  openUntil: number;
  /** Times the circuit opened without a success in between: each opening lasts twice the previous. */
  opens: number;
  /** Whether the one POST a half-open circuit lets through is in flight. */
  probing: boolean;
  /** Smoothed time of a POST, in milliseconds (undefined before the first answer). */
  latencyMs: number | undefined;
}

/** Settings of {@link createLanes}. */
export interface LaneOptions {
  /** POSTs in flight at once in all, shared evenly by the endpoints with messages to send. */
  concurrency: number;
  /** Messages the sender holds at most in all. */
  holdMax: number;
  /** Lease of a claimed message: an endpoint holds no more than it can send within half of it. */
  leaseMs: number;
  /** Time cap of a POST: the pace assumed of an endpoint before its first answer. */
  timeoutMs: number;
  /** Failed attempts in a row that open a circuit. */
  circuitFailures: number;
  /** How long a circuit first stays open. */
  circuitOpenMs: number;
  /** How long it stays open at most, however many times it opened. */
  circuitMaxOpenMs: number;
}

/** What the sender asks before a claim. */
export interface ClaimScan {
  /** Endpoints whose messages a claim must leave where they are: circuit open, or hands full. */
  skip: string[];
  /**
   * Whether a claim round is due: the hand holds half of `holdMax` or less in all, or an endpoint that
   * is sending and not skipped holds half of what it may or less (so a slow endpoint's held messages
   * never keep a fast one from its next claim). Not while every endpoint with messages in hand is
   * skipped and the hand is fuller than that: such a claim would pass over all their due messages to
   * find none.
   */
  hungry: boolean;
  /**
   * Whether the endpoints not skipped hold half of `holdMax` or less (the hand may be fuller, with the
   * messages of skipped endpoints). A claim round is then not due (`hungry` says when one is), but an
   * endpoint with nothing in hand can only get its messages through a claim: the sender makes one now and
   * then (a slow endpoint's full hand must not keep an idle fast one from its next messages).
   */
  room: boolean;
  /** Endpoints whose circuit is open: what even a small claim at a poll leaves out. */
  open: string[];
  /** How many to claim: what the endpoints not skipped leave of `holdMax`, and at least half of it. */
  limit: number;
}

/** The lanes of one sender. */
export interface Lanes {
  /** The lane of an endpoint, made on first use. */
  of(endpointId: string): Lane;
  /** The lane that may start a POST now (round robin, a priority-0 message first), if any. */
  next(now: number): Lane | undefined;
  /**
   * Takes the next message of a lane that `next` named and counts its POST as started; `probe`: it is
   * the one POST a half-open circuit lets through.
   */
  start(lane: Lane, now: number): { message: ClaimedWebhookMessage; probe: boolean };
  /** Counts a POST as ended. */
  end(lane: Lane): void;
  /** Endpoints to skip in a claim, and what the others hold. */
  scan(now: number): ClaimScan;
  /** Whether the circuit is open at `now` (half open is not: it lets its probe through). */
  isOpen(lane: Lane, now: number): boolean;
  /**
   * Records a successful POST; true when it closed an open or half-open circuit (the caller clears
   * the stored one).
   */
  succeeded(lane: Lane, latencyMs: number): boolean;
  /**
   * Records a failed POST (`probe`: the one a half-open circuit let through); the time the circuit
   * opened until, when this failure opened it (the caller stores it and hands the lane's messages back).
   */
  failed(lane: Lane, latencyMs: number, now: number, probe: boolean): number | undefined;
  /** Takes the messages a lane holds but has not started (to hand them back). */
  takeHeld(lane: Lane): ClaimedWebhookMessage[];
  /** Drops what is known of an endpoint's circuit and speed (it changed). */
  reset(endpointId: string): void;
  /** Every lane. */
  all(): Iterable<Lane>;
}

/** What a sender holds at most in all, in rounds of `holdMax`, however many endpoints hold some. */
const HAND_ROUNDS = 4;
/** Weight of a new POST time in a lane's smoothed latency. */
const LATENCY_WEIGHT = 0.2;

/**
 * A sender's lanes. A lane may have `concurrency / endpoints with messages` POSTs in flight (at least
 * one; the POSTs an endpoint already has do not shrink another's share), holds as many messages as it
 * can send within half a lease at its measured speed, and has a circuit: `circuitFailures` failed POSTs
 * in a row open it for `circuitOpenMs`, doubled after each failed probe up to `circuitMaxOpenMs`; while
 * open, nothing is sent; once the time has passed, one POST (the probe) is let through, and its success
 * closes the circuit.
 */
export function createLanes(options: LaneOptions): Lanes {
  const lanes = new Map<string, Lane>();
  let order: Lane[] = [];
  let cursor = 0;

  const waiting = (lane: Lane) => lane.urgent.length + lane.queue.length;
  const isOpen = (lane: Lane, now: number) => lane.openUntil > now;
  const halfOpen = (lane: Lane, now: number) => lane.openUntil !== 0 && lane.openUntil <= now;

  function share(): number {
    let busy = 0;
    for (const lane of order) if (lane.inFlight > 0 || waiting(lane) > 0) busy++;
    return Math.max(1, Math.floor(options.concurrency / Math.max(1, busy)));
  }

  /** POSTs the lane may have in flight now. */
  function budget(lane: Lane, now: number, fair: number): number {
    if (isOpen(lane, now)) return 0;
    if (halfOpen(lane, now)) return lane.probing ? 0 : 1;
    return fair;
  }

  /**
   * Messages the lane may hold (waiting and in flight) now: a few rounds of its share (as many as one
   * endpoint alone would hold in all), and no more than its share sends in half a lease at its pace, its
   * smoothed POST time (before any answer, a POST is taken to last `timeoutMs`).
   */
  function holdCap(lane: Lane, now: number, fair: number): number {
    if (isOpen(lane, now)) return 0;
    if (halfOpen(lane, now)) return 1;
    const pace = Math.max(lane.latencyMs ?? options.timeoutMs, 1);
    const sendable = Math.floor((fair * options.leaseMs) / 2 / pace);
    const rounds = Math.ceil((fair * options.holdMax) / options.concurrency);
    return Math.max(fair, Math.min(rounds, sendable));
  }

  function drop(lane: Lane): void {
    if (lane.inFlight > 0 || waiting(lane) > 0 || lane.openUntil !== 0 || lane.failures > 0) return;
    lanes.delete(lane.endpointId);
    order = order.filter((l) => l !== lane);
  }

  return {
    of(endpointId) {
      let lane = lanes.get(endpointId);
      if (!lane) {
        lane = {
          endpointId,
          urgent: [],
          queue: [],
          inFlight: 0,
          failures: 0,
          openUntil: 0,
          opens: 0,
          probing: false,
          latencyMs: undefined,
        };
        lanes.set(endpointId, lane);
        order.push(lane);
      }
      return lane;
    },

    next(now) {
      const n = order.length;
      if (n === 0) return undefined;
      const fair = share();
      let pick = -1;
      for (let i = 0; i < n; i++) {
        const at = (cursor + i) % n;
        const lane = order[at] as Lane;
        if (waiting(lane) === 0 || lane.inFlight >= budget(lane, now, fair)) continue;
        if (lane.urgent.length > 0) {
          pick = at;
          break;
        }
        if (pick < 0) pick = at;
      }
      if (pick < 0) return undefined;
      cursor = (pick + 1) % n;
      return order[pick];
    },

    start(lane, now) {
      const message = lane.urgent.shift() ?? lane.queue.shift();
      if (!message) throw new Error('a lane started without a message');
      lane.inFlight++;
      const probe = halfOpen(lane, now);
      if (probe) lane.probing = true;
      return { message, probe };
    },

    end(lane) {
      lane.inFlight--;
      drop(lane);
    },

    scan(now) {
      const fair = share();
      const skip: string[] = [];
      const open: string[] = [];
      let held = 0;
      let all = 0;
      let starving = false;
      for (const lane of order) {
        const holds = waiting(lane) + lane.inFlight;
        all += holds;
        const cap = holdCap(lane, now, fair);
        if (isOpen(lane, now)) open.push(lane.endpointId);
        if (isOpen(lane, now) || holds >= cap) {
          skip.push(lane.endpointId);
          continue;
        }
        held += holds;
        if (lane.inFlight > 0 && holds <= cap / 2) starving = true;
      }
      const half = Math.ceil(options.holdMax / 2);
      // However the lanes stand, the hand as a whole stays within a few rounds.
      const within = all < HAND_ROUNDS * options.holdMax;
      const hungry = within && (all <= options.holdMax - half || starving);
      const room = within && held <= options.holdMax - half;
      return { skip, open, hungry, room, limit: Math.max(half, options.holdMax - held) };
    },

    isOpen,

    succeeded(lane, latencyMs) {
      smooth(lane, latencyMs);
      lane.failures = 0;
      lane.probing = false;
      const wasOpen = lane.openUntil !== 0;
      lane.openUntil = 0;
      lane.opens = 0;
      return wasOpen;
    },

    failed(lane, latencyMs, now, probe) {
      smooth(lane, latencyMs);
      lane.failures++;
      if (probe) lane.probing = false;
      // A POST started before the circuit opened may fail after: it does not open it again.
      const opens = probe || (lane.openUntil === 0 && lane.failures >= options.circuitFailures);
      if (!opens) return undefined;
      const ms = Math.min(options.circuitMaxOpenMs, options.circuitOpenMs * 2 ** Math.min(lane.opens, 30));
      lane.opens++;
      lane.openUntil = now + ms;
      return lane.openUntil;
    },

    takeHeld(lane) {
      const held = [...lane.urgent, ...lane.queue];
      lane.urgent.length = 0;
      lane.queue.length = 0;
      drop(lane);
      return held;
    },

    reset(endpointId) {
      const lane = lanes.get(endpointId);
      if (!lane) return;
      lane.failures = 0;
      lane.openUntil = 0;
      lane.opens = 0;
      lane.probing = false;
      lane.latencyMs = undefined;
      drop(lane);
    },

    all: () => order,
  };
}

function smooth(lane: Lane, latencyMs: number): void {
  lane.latencyMs =
    lane.latencyMs === undefined ? latencyMs : lane.latencyMs + LATENCY_WEIGHT * (latencyMs - lane.latencyMs);
}
