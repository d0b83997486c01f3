import type { Logger } from '../base/base-types.js';
import type { MailroomEvents } from './engine-events.js';

type Listener = (event: never) => void;

/** A tiny typed event emitter: a throwing listener is logged, never breaks delivery. */
export class EventHub {
  readonly #listeners = new Map<keyof MailroomEvents, Set<Listener>>();
  readonly #firstListener = new Map<keyof MailroomEvents, () => void>();

  constructor(private readonly logger: Logger) {}

  /** Subscribe; returns the unsubscribe function. */
  on<E extends keyof MailroomEvents>(event: E, listener: MailroomEvents[E]): () => void {
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
  onFirstListener(event: keyof MailroomEvents, start: () => void): void {
    if ((this.#listeners.get(event)?.size ?? 0) > 0) start();
    else this.#firstListener.set(event, start);
  }

  /** Whether anyone listens (to skip building event objects). */
  has(event: keyof MailroomEvents): boolean {
    return (this.#listeners.get(event)?.size ?? 0) > 0;
  }

  /** Call every listener of `event`. */
  emit<E extends keyof MailroomEvents>(event: E, payload: Parameters<MailroomEvents[E]>[0]): void {
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
