import type { BaseContext } from '../context/base-context.js';
import type { ReceivingRouteRecord, ReceivingSettingsRecord } from '../store/receiving-store.js';

/**
 * How long a receiving domain's routes and a project's receiving settings are reused by the listener's
 * reads (the RCPT check, routing and the size cap of each message). A change made through this engine is
 * seen at once (it forgets what it kept); one made by another process on the same store (a second
 * `mailroom serve`, `mailroom route add` run locally) is seen at most this much later.
 */
export const RECEIVING_READS_MS = 2_000;
/** Domains and projects kept at once; the oldest go first (a flood of RCPTs to random domains stays bounded). */
const KEPT = 1_000;

/**
 * The routes and settings the listener reads for every message (three store reads each: RCPT, routing,
 * settings), kept {@link RECEIVING_READS_MS}. Reads in flight at once for one key are asked once; a read
 * that fails is not kept.
 */
export interface ReceivingReads {
  /** The routes of `domain` (lower-case), as `Store.findReceivingRoutes` answers. */
  routes(domain: string): Promise<ReceivingRouteRecord[]>;
  /** A project's settings, as `Store.getReceivingSettings` answers. */
  settings(projectId: string): Promise<ReceivingSettingsRecord | undefined>;
  /** Forgets everything kept: called after this engine changes a route or a project's settings. */
  forget(): void;
}

/** {@link ReceivingReads} over `ctx.store`; `now` is wall-clock milliseconds (the engine's clock may be a test's). */
export function receivingReads(
  ctx: Pick<BaseContext, 'store'>,
  options: { ms?: number; now?: () => number } = {},
): ReceivingReads {
  const ms = options.ms ?? RECEIVING_READS_MS;
  const now = options.now ?? (() => performance.now());
  const routes = keptReads<ReceivingRouteRecord[]>(ms, now, (domain) =>
    ctx.store.findReceivingRoutes(domain),
  );
  const settings = keptReads<ReceivingSettingsRecord | undefined>(ms, now, (projectId) =>
    ctx.store.getReceivingSettings(projectId),
  );
  return {
    routes: routes.read,
    settings: settings.read,
    forget() {
      routes.clear();
      settings.clear();
    },
  };
}

function keptReads<T>(ms: number, now: () => number, load: (key: string) => Promise<T>) {
  const kept = new Map<string, { until: number; value: Promise<T> }>();
  return {
    read(key: string): Promise<T> {
      const found = kept.get(key);
      if (found && found.until > now()) return found.value;
      if (found) kept.delete(key);
      const value = load(key);
      const entry = { until: now() + ms, value };
      kept.set(key, entry);
      if (kept.size > KEPT) kept.delete(kept.keys().next().value as string);
      // A failed read is asked again by the next message (`clear` has dropped any read started before it).
      value.catch(() => {
        if (kept.get(key) === entry) kept.delete(key);
      });
      return value;
    },
    clear(): void {
      kept.clear();
    },
  };
}
