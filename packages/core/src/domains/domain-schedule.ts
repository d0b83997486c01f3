import type { BaseContext } from '../context/base-context.js';
import type { DomainRecord } from '../store/domain-store.js';

/** Domains claimed per look. */
const CLAIM_LIMIT = 10;
/** How long a claimed check is this process's: long enough for the slowest check, then others retry. */
const CHECK_LEASE_MS = 5 * 60_000;

/** The scheduled re-checks of a running worker. Internal. */
export interface DomainSchedule {
  /** Start looking for due domains every `everyMs` (the first look right away); nothing when 0. */
  start(): void;
  /** Stop looking; resolves when the checks under way have finished. */
  stop(): Promise<void>;
  /** Check the domains due now, a claim at a time; returns how many were checked. */
  runOnce(): Promise<number>;
}

/**
 * Claims the domains due a check (`DomainStore.claimDomainChecks`, a lease so one process checks a domain
 * at a time) and checks each with `check`, which writes its outcome and the domain's next check.
 */
export function createDomainSchedule(
  ctx: BaseContext,
  everyMs: number,
  check: (record: DomainRecord) => Promise<unknown>,
): DomainSchedule {
  const { store, clock, logger } = ctx;
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<number> | undefined;

  async function runOnce(): Promise<number> {
    let checked = 0;
    for (;;) {
      const due = await store.claimDomainChecks({
        now: clock.now(),
        limit: CLAIM_LIMIT,
        leaseMs: CHECK_LEASE_MS,
      });
      for (const record of due) {
        try {
          await check(record);
          checked++;
        } catch (error) {
          // The lease runs out and the domain is checked again then.
          logger.warn(
            { err: error, projectId: record.projectId, domain: record.domain },
            'domain check failed',
          );
        }
      }
      if (due.length < CLAIM_LIMIT) return checked;
    }
  }

  const tick = () => {
    running ??= ctx
      .ready()
      .then(runOnce)
      .catch((error: unknown) => {
        logger.warn({ err: error }, 'domain checks failed; the next look tries again');
        return 0;
      })
      .finally(() => {
        running = undefined;
      });
  };

  return {
    start() {
      if (timer || everyMs <= 0) return;
      timer = setInterval(tick, everyMs);
      // Housekeeping: it never keeps the process alive.
      timer.unref();
      tick();
    },
    async stop() {
      clearInterval(timer);
      timer = undefined;
      await running;
    },
    runOnce,
  };
}
