/**
 * A transport that stands for others: one per sender domain, project or kind of mailing, each with a
 * fallback that takes over while it fails transiently.
 */
import { isMailroomError, MailroomError, type MailroomErrorOptions } from '../base/errors.js';
import type { MailingKind } from '../store/records.js';
import type { OutgoingMailingContext, SendReceipt, Transport } from './transport.js';

const DRIVER_NAME = 'route';

/** Which messages a route takes; every condition given must hold (none given: every message). */
export interface RouteMatch {
  /** The sender's domain (the part of the From address after `@`), compared case-insensitively. */
  senderDomain?: string | string[];
  /** The sending project's id. */
  project?: string | string[];
  /** `message` (transactional mail) or `broadcast`. */
  kind?: MailingKind | MailingKind[];
}

/** One route of {@link routeTransport}. */
export interface TransportRoute {
  /**
   * Its name, unique among the routes: what a warm-up schedule per route (engine option
   * `warmup.routes`) refers to.
   */
  name?: string;
  /** The messages it takes. */
  when: RouteMatch;
  /** Where they go. */
  transport: Transport;
}

/** Options of {@link routeTransport}. */
export interface RouteTransportOptions {
  /** Tried in order; the first whose `when` matches takes the message. */
  routes: TransportRoute[];
  /**
   * Takes the messages no route matches, and the next attempts of a route's messages while that route's
   * transport fails transiently. Without it, a message no route matches fails permanently.
   */
  fallback?: Transport;
  /**
   * How long a route's transport is passed over after a transient failure (refused connection, 421,
   * throttling, a paused account); then one message probes it, and its success gives it back its mail.
   * @default 30000
   */
  failoverMs?: number;
  /** Clock for the failover window, in milliseconds. @default performance.now */
  now?: () => number;
}

/** Health of one routed transport. */
interface Health {
  /** Passed over until then (0: healthy). */
  downUntil: number;
  /** A probe is under way after `downUntil`: the others still go to the fallback. */
  probing: boolean;
}

// Messages whose last attempt failed transiently on a route's transport, by Message-ID: their next
// attempt goes to the fallback even if the failover window has passed. Bounded: it is a hint.
const MAX_REMEMBERED = 10_000;

/**
 * Sends each message through the first route whose `when` matches it, by the message's
 * `mailing` context (project, kind) and sender domain, else through `fallback`.
 *
 * Failover: when a route's transport fails transiently (`TRANSPORT_TRANSIENT`: refused connection, 4xx,
 * throttled, paused), the error goes back to the worker, which retries the delivery as usual; while the
 * transport is passed over (`failoverMs`), and always for that message's next attempt, the route's
 * messages go to the fallback, with the same Message-ID. After the window one message probes the
 * transport again; when it passes, the route takes its mail back. A permanent refusal
 * (`TRANSPORT_PERMANENT`) never fails over: the message itself was refused. While a fallback exists, a
 * route's transient failure asks nothing of the worker (`backpressure: 'none'`): the next attempts go
 * elsewhere, so the worker neither slows down nor pauses for it.
 *
 * The receipt's `transport` names the transport that sent the message (`smtp`, `ses`...), which the
 * engine stores with the reply (`ses: 250 Ok ...`). The core composes each message once for all routes:
 * signed when any route's transport wants the core to sign (a provider that signs too adds its own
 * signature), in the first transport's text encoding, with the fields when any route wants them.
 *
 * @example
 * const transport = routeTransport({
 *   routes: [{ when: { kind: 'broadcast' }, transport: sesTransport({ region: 'eu-west-1' }) }],
 *   fallback: smtpTransport('smtp://relay.internal:587'),
 * });
 */
export function routeTransport(options: RouteTransportOptions): Transport {
  const { routes, fallback } = options;
  if (routes.length === 0 && !fallback) {
    throw new TypeError('routeTransport: give at least one route or a fallback');
  }
  const failoverMs = options.failoverMs ?? 30_000;
  const now = options.now ?? (() => performance.now());
  const all = unique([...routes.map((r) => r.transport), ...(fallback ? [fallback] : [])]);
  const health = new Map<Transport, Health>(all.map((t) => [t, { downUntil: 0, probing: false }]));
  const failedOn = new Map<string, Transport>();
  const routeNames = routes.flatMap((r) => (r.name === undefined ? [] : [r.name]));
  if (new Set(routeNames).size !== routeNames.length) {
    throw new TypeError(`routeTransport: route names must be unique, got ${routeNames.join(', ')}`);
  }

  /** The route's transport, or the fallback while it is passed over; `probe` when this send probes. */
  function choose(
    messageId: string,
    from: string,
    context: OutgoingMailingContext | undefined,
  ): { transport: Transport; routed: boolean; probe: boolean } {
    const route = routes.find((r) => matches(r.when, from, context));
    if (!route) {
      if (fallback) return { transport: fallback, routed: false, probe: false };
      throw new MailroomError(
        'TRANSPORT_PERMANENT',
        `no route for a message from ${from} (${context ? `project ${context.projectId}, ${context.kind}` : 'no mailing context'}) and no fallback`,
        { source: DRIVER_NAME },
      );
    }
    const primary = route.transport;
    if (!fallback || fallback === primary) return { transport: primary, routed: true, probe: false };
    const state = health.get(primary) as Health;
    if (failedOn.get(messageId) === primary) return { transport: fallback, routed: true, probe: false };
    if (state.downUntil === 0) return { transport: primary, routed: true, probe: false };
    if (now() < state.downUntil || state.probing) return { transport: fallback, routed: true, probe: false };
    state.probing = true;
    return { transport: primary, routed: true, probe: true };
  }

  async function dispatch(
    messageId: string,
    from: string,
    context: OutgoingMailingContext | undefined,
    send: (transport: Transport) => Promise<SendReceipt>,
  ): Promise<SendReceipt> {
    const { transport, routed, probe } = choose(messageId, from, context);
    const state = health.get(transport) as Health;
    // Only a route with a fallback to go to has a health to keep.
    const isPrimary = routed && fallback !== undefined && transport !== fallback;
    try {
      const receipt = await send(transport);
      failedOn.delete(messageId);
      if (isPrimary) {
        state.downUntil = 0;
        state.probing = false;
      }
      return { ...receipt, transport: receipt.transport ?? transport.name };
    } catch (error) {
      if (!isPrimary) {
        // The fallback failed too: the next attempt follows the route's health, not this message's hint.
        failedOn.delete(messageId);
        throw error;
      }
      if (probe) state.probing = false;
      if (!isMailroomError(error, 'TRANSPORT_TRANSIENT')) {
        // A permanent refusal is about the message: the transport itself answered.
        if (probe) state.downUntil = 0;
        throw error;
      }
      state.downUntil = now() + failoverMs;
      remember(messageId, transport);
      throw routedAround(error, transport);
    }
  }

  function remember(messageId: string, transport: Transport): void {
    failedOn.delete(messageId);
    failedOn.set(messageId, transport);
    if (failedOn.size > MAX_REMEMBERED) failedOn.delete(failedOn.keys().next().value as string);
  }

  return {
    name: DRIVER_NAME,
    capabilities: {
      dkim: all.some((t) => t.capabilities.dkim),
      maxConcurrency: Math.max(...all.map((t) => t.capabilities.maxConcurrency)),
      ...(all[0]?.capabilities.textEncoding ? { textEncoding: all[0].capabilities.textEncoding } : {}),
      ...(all.some((t) => t.capabilities.fields) ? { fields: true } : {}),
    },

    routeNames,

    routeOf(from, mailing) {
      // By the route's match alone: a route's warm-up counts what its fallback sends for it too.
      return routes.find((r) => matches(r.when, from, mailing))?.name;
    },

    send(message) {
      const from = message.from ?? message.envelope.from;
      return dispatch(message.messageId, from, message.mailing, (t) => t.send(message));
    },

    async verify() {
      // Start-up passes when every route can send somewhere: its transport, else the fallback.
      const results = new Map<Transport, unknown>();
      await Promise.all(
        all.map(async (t) => {
          try {
            await t.verify?.();
          } catch (error) {
            results.set(t, error);
          }
        }),
      );
      if (fallback && results.has(fallback)) throw results.get(fallback);
      for (const [t, error] of results) {
        if (!fallback) throw error;
        (health.get(t) as Health).downUntil = now() + failoverMs;
      }
    },

    async close() {
      await Promise.all(all.map((t) => t.close?.()));
    },
  };
}

function matches(when: RouteMatch, from: string, context: OutgoingMailingContext | undefined): boolean {
  if (when.senderDomain !== undefined) {
    const domain = from.slice(from.lastIndexOf('@') + 1).toLowerCase();
    if (!list(when.senderDomain).some((d) => d.toLowerCase() === domain)) return false;
  }
  if (when.project !== undefined && !(context && list(when.project).includes(context.projectId)))
    return false;
  if (when.kind !== undefined && !(context && list(when.kind).includes(context.kind))) return false;
  return true;
}

/** The route's transient error, as the worker should take it: retried, with nothing else asked. */
function routedAround(error: MailroomError, transport: Transport): MailroomError {
  // `none` outweighs the reply code: a 421 here must not slow the worker's other sends down.
  const options: MailroomErrorOptions = { cause: error, backpressure: 'none' };
  if (error.responseCode !== undefined) options.responseCode = error.responseCode;
  if (error.command !== undefined) options.command = error.command;
  if (error.response !== undefined) options.response = error.response;
  return new MailroomError(
    'TRANSPORT_TRANSIENT',
    `${transport.name} failed, the next attempt goes to the fallback: ${error.message}`,
    options,
  );
}

function list<T>(value: T | T[]): T[] {
  return Array.isArray(value) ? value : [value];
}

function unique<T>(values: T[]): T[] {
  return [...new Set(values)];
}
