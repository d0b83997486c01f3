import type { MailingRecord, MessageTag } from '../store/records.js';
import type { Store } from '../store/store.js';
import type { AuthContext } from './auth-context.js';
import type { BaseContext } from './base-context.js';

/** Resolves a secret, or an `AuthContext` already resolved, to the project a call acts for. */
export type ResolveAuth = (auth: string | AuthContext) => Promise<AuthContext>;

/** What the engine hands a capability when it builds it. */
export interface CapabilitySetup {
  /** What every part shares: store, transport, clock, logger, event hub, outbox, limits, fetcher. */
  readonly ctx: BaseContext;
  /** Resolves the caller of a facade method (`UNAUTHORIZED` for a bad secret). */
  readonly resolveAuth: ResolveAuth;
  /** A mailing of the caller's project by ref; `NOT_FOUND` otherwise, another project's included. */
  readonly findMailing: (auth: string | AuthContext, ref: string) => Promise<MailingRecord>;
  /**
   * The engine's `send` (the whole accept path: sender, template, topic and key checks; suppressions and
   * the guard at delivery), for a capability that sends on the project's behalf (automations). Bound
   * late: call it from facade methods or tasks, never from `create`.
   */
  readonly send: (
    auth: AuthContext,
    body: unknown,
    options: {
      /** The call's idempotency key, if any (an automation's send step has none: its `ref` does that). */
      idempotencyKey?: string;
      /**
       * The message's ref, chosen by the caller: the store keeps a ref once per project, so a message
       * under it is committed at most once (a second commit is `CONFLICT`).
       */
      ref?: string;
      /** Tags of the message, kept with its content (what sent it). */
      tags?: MessageTag[];
    },
  ) => Promise<{ ref: string }>;
}

/** Work a capability runs beside the worker: started after the store is ready, stopped before it. */
export interface CapabilityTask {
  /** Start in the background (the worker's `start`). */
  start(): void;
  /** Stop; resolves when work in flight has ended (the worker's `stop` and the engine's `close`). */
  stop(): Promise<void>;
}

/** A capability once built: what it adds to the engine. */
export interface CapabilityParts<Facade extends object, Provides extends object> {
  /** The methods it adds to the engine (`Mailroom` extends the capability's facade interface). */
  readonly facade: Facade;
  /** What it lends the parts that use it (the delivery loop reads signing keys, tracking setups). */
  readonly provides: Provides;
  /** Work that runs with the worker, if any. */
  readonly task?: CapabilityTask;
  /** Called by the engine's `close()` after the worker stopped: flush, release. */
  close?(): Promise<void>;
}

/**
 * One capability of the engine, plugged into `createMailroom` through this seam: the slice of
 * `MailroomOptions` it reads (its own options interface, which `MailroomOptions` extends), the store role
 * it needs, the methods it adds (its facade interface, which `Mailroom` extends), what it lends the other
 * parts, and its background work. Its events are declared in its folder and joined into `MailroomEvents`
 * (`engine/engine-events.ts`). docs/architecture.md, "Adding a capability", walks through it.
 */
export interface Capability<Options extends object, Facade extends object, Provides extends object> {
  /** Its name, for errors and logs (`tracking`, `domains`). */
  readonly name: string;
  /**
   * The `Store` methods it calls: its store role, declared as data. The engine refuses, at creation, a
   * store that lacks one (`VALIDATION_FAILED` naming the method), instead of failing at first use.
   */
  readonly storeRole: readonly (keyof Store)[];
  /** Builds it from the base and the engine's options (it reads only its own slice of them). */
  create(setup: CapabilitySetup, options: Options): CapabilityParts<Facade, Provides>;
}

/**
 * The method names of store role `R`, every one of them: leaving one out is a compile error naming it.
 * @example storeRole<TrackingStore>()('saveLinkMap', 'getLinkMap', ...)
 */
export function storeRole<R extends object>() {
  return <const K extends readonly (keyof R & string)[]>(
    ...keys: K &
      (Exclude<keyof R, K[number]> extends never ? unknown : { missing: Exclude<keyof R, K[number]> })
  ): K => keys;
}
