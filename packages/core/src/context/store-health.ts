import type { Clock, Logger } from '../base/base-types.js';
import { type ErrorCode, isStoreOutage } from '../base/errors.js';
import type { Store } from '../store/store.js';

/** The store's state as `Mailroom.health()` reports it. */
export type StoreHealth =
  | { readonly state: 'ok' }
  | {
      /** `unavailable`: the database cannot be reached; `storage-full`: no room for new mail. */
      readonly state: 'unavailable' | 'storage-full';
      /** When the outage started (its first failed call). */
      readonly since: Date;
      /** The error code the store's calls fail with. */
      readonly code: ErrorCode;
      /** The first failure's message (the store's words, never a secret). */
      readonly message: string;
    };

/** A store watched for outages, and its state. */
export interface WatchedStore {
  /** The same store, every call's outcome observed. */
  readonly store: Store;
  /** The state now: probed with `Store.ping` when the store has one. */
  health(): Promise<StoreHealth>;
  /** The state as the last calls left it, without probing. */
  current(): StoreHealth;
}

interface Outage {
  since: Date;
  code: ErrorCode;
  message: string;
  /** The methods that failed with it: the outage ends when one of them succeeds. */
  failed: Set<string>;
}

/**
 * Watch `store` for outages (calls failing with `STORE_UNAVAILABLE` or `STORAGE_FULL`) and log each
 * outage twice, when it starts and when it ends, whatever the number of calls that fail in between.
 * An outage ends when a method that failed during it succeeds (or a ping does): a read that succeeds
 * while the disk is below its reserve ends nothing, so a full disk does not flap between the states.
 * The store's results and errors pass through unchanged.
 */
export function watchStore(store: Store, clock: Clock, logger: Logger): WatchedStore {
  let outage: Outage | undefined;

  const failed = (method: string, error: unknown) => {
    if (!isStoreOutage(error)) return;
    if (outage === undefined) {
      outage = { since: clock.now(), code: error.code, message: error.message, failed: new Set() };
      logger.error({ code: error.code, err: error }, 'store outage: the store cannot take writes for now');
    }
    outage.failed.add(method);
  };
  const succeeded = (method: string) => {
    if (outage === undefined || (method !== 'ping' && !outage.failed.has(method))) return;
    const { since, code } = outage;
    outage = undefined;
    logger.info({ code, downMs: clock.now().getTime() - since.getTime() }, 'store outage over');
  };

  const wrapped = new Map<PropertyKey, unknown>();
  const watched = new Proxy(store, {
    get(target, key, receiver) {
      const value = Reflect.get(target, key, receiver);
      if (typeof value !== 'function' || key === 'close' || typeof key !== 'string') return value;
      let wrapper = wrapped.get(key);
      if (wrapper === undefined) {
        wrapper = (...args: unknown[]) => {
          // Read at each call, not when first wrapped: a store may hand out another function later.
          const current = Reflect.get(target, key) as (...a: unknown[]) => unknown;
          const result: unknown = Reflect.apply(current, target, args);
          if (result instanceof Promise) {
            result.then(
              () => succeeded(key),
              (error: unknown) => failed(key, error),
            );
          }
          return result;
        };
        wrapped.set(key, wrapper);
      }
      return wrapper;
    },
  });

  const current = (): StoreHealth =>
    outage === undefined
      ? { state: 'ok' }
      : {
          state: outage.code === 'STORAGE_FULL' ? 'storage-full' : 'unavailable',
          since: outage.since,
          code: outage.code,
          message: outage.message,
        };

  return {
    store: watched,
    current,
    async health() {
      // The ping's outcome moves the state through the proxy, like any call's.
      await watched.ping?.().catch(() => undefined);
      return current();
    },
  };
}
