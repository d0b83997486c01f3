import type { Logger, MailroomEvents } from './mailroom-types.js';

type Listener = (event: never) => void;

/** A tiny typed event emitter: a throwing listener is logged, never breaks delivery. */
export class EventHub {
  readonly #listeners = new Map<keyof MailroomEvents, Set<Listener>>();

  constructor(private readonly logger: Logger) {}

  /** Subscribe; returns the unsubscribe function. */
  on<E extends keyof MailroomEvents>(event: E, listener: MailroomEvents[E]): () => void {
    const set = this.#listeners.get(event) ?? new Set<Listener>();
    this.#listeners.set(event, set);
    set.add(listener as Listener);
    return () => set.delete(listener as Listener);
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
