import type { Logger } from '../base/base-types.js';

/** A map of event names to their listeners' signatures; each capability declares its own. */
export type EventMap = object;

/** The payload a listener of `L` takes. */
export type EventPayload<L> = L extends (event: infer P) => void ? P : never;

type Listener = (event: never) => void;

/**
 * A tiny typed event emitter: a throwing listener is logged, never breaks delivery. It knows no event:
 * each capability declares the events it emits or listens to and takes its own view of the one hub
 * (`ctx.events.view<TrackingEvents>()`); the engine's `MailroomEvents` is the union of those declarations.
 */
export class EventHub<E extends EventMap = EventMap> {
  readonly #listeners = new Map<PropertyKey, Set<Listener>>();
  readonly #firstListener = new Map<PropertyKey, () => void>();

  constructor(private readonly logger: Logger) {}

  /**
   * This hub typed by `F`, a capability's own events (the same object: listeners and emitters of every view
   * meet). Two capabilities that declared one name differently would not compile into `MailroomEvents`.
   */
  view<F extends EventMap>(): EventHub<F> {
    return this as unknown as EventHub<F>;
  }

  /** Subscribe; returns the unsubscribe function. */
  on<K extends keyof E>(event: K, listener: E[K]): () => void {
    const set = this.#listeners.get(event) ?? new Set<Listener>();
    this.#listeners.set(event, set);
    set.add(listener as Listener);
    const start = this.#firstListener.get(event);
    if (start) {
      this.#firstListener.delete(event);
      start();
    }
    return () => set.delete(listener as Listener);
  }

  /**
   * Run `start` once, when `event` gets its first listener: an internal follower of other events (the
   * progress reporter) subscribes only when its own event is wanted, so `has` stays false otherwise.
   */
  onFirstListener(event: keyof E, start: () => void): void {
    if ((this.#listeners.get(event)?.size ?? 0) > 0) start();
    else this.#firstListener.set(event, start);
  }

  /** Whether anyone listens (to skip building event objects). */
  has(event: keyof E): boolean {
    return (this.#listeners.get(event)?.size ?? 0) > 0;
  }

  /** Call every listener of `event`. */
  emit<K extends keyof E>(event: K, payload: EventPayload<E[K]>): void {
    const set = this.#listeners.get(event);
    if (!set) return;
    for (const listener of set) {
      try {
        (listener as (p: typeof payload) => void)(payload);
      } catch (error) {
        this.logger.error({ err: error, event }, 'event listener threw');
      }
    }
  }
}
