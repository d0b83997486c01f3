import { isStoreOutage } from '../base/errors.js';
import type { CapabilityTask } from '../context/capability.js';
import type { WorkflowRecord } from '../store/automation-records.js';
import type { AutomationsEngineOptions } from './automation-types.js';
import { type BroadcastSeen, createBroadcastYield } from './broadcast-yield.js';
import { createBuiltinTriggers } from './builtin-triggers.js';
import { type RunParts, runClaimed } from './run-steps.js';

/**
 * The first batch after the worker starts or found nothing due, and every batch while a broadcast
 * sends: a batch in flight is not cut short, so a burst of due runs starts small (the delivery loop
 * claims a waiting broadcast meanwhile, and the run worker yields from its first rest) and doubles up to
 * `batchSize` while no broadcast is seen.
 */
const SMALL_BATCH = 10;

/** The automations' worker: claims due runs with leases, as the delivery worker claims deliveries. */
export interface RunWorker extends CapabilityTask {
  /** Claims and runs due runs until none is due at the clock's time; returns how many it ran. */
  runDue(): Promise<number>;
}

/**
 * Runs are rows with a due time, claimed in batches with a lease (`AutomationStore.claimRuns`), so any
 * number of workers share them and no timer per run lives in memory: a wait is a due time in the store.
 * The task polls every `pollMs`; a full batch is followed by the next at once.
 */
export function createRunWorker(
  parts: RunParts,
  options: AutomationsEngineOptions['automations'] = {},
): RunWorker {
  const { store, clock, logger } = parts.ctx;
  const pollMs = options.pollMs ?? 1000;
  const leaseMs = options.leaseMs ?? 60_000;
  const batchSize = options.batchSize ?? 50;
  const share = Math.min(Math.max(options.shareBesideBroadcasts ?? 0.05, 0.01), 1);
  const yielding = createBroadcastYield(parts.ctx.events.view<BroadcastSeen>(), share);
  /** Messages the runs' send steps accepted since the last look (each goes out before a broadcast's). */
  let messages = 0;
  const counted: RunParts = {
    ...parts,
    send: (...args) =>
      parts.send(...args).then((result) => {
        messages++;
        return result;
      }),
  };
  /** The background task's next batch size (see {@link SMALL_BATCH}). */
  let ramp = Math.min(SMALL_BATCH, batchSize);
  let timer: ReturnType<typeof setTimeout> | undefined;
  let running: Promise<unknown> = Promise.resolve();
  let stopped = true;

  const builtins = createBuiltinTriggers(parts.ctx);

  /** The built-in events since the last look, then one claim and its runs; returns how many runs were claimed. */
  async function once(limit: number): Promise<number> {
    await builtins.poll();
    const claimed = await store.claimRuns({ now: clock.now(), limit, leaseMs });
    // One read of each workflow for the batch (a claim is a moment: a change after it is the next one's).
    const workflows = new Map<string, Promise<WorkflowRecord | undefined>>();
    const workflowOf = (projectId: string, workflowId: string) => {
      const key = `${projectId}/${workflowId}`;
      let read = workflows.get(key);
      if (!read) {
        read = store.getWorkflow(projectId, workflowId);
        workflows.set(key, read);
      }
      return read;
    };
    await Promise.all(claimed.map((run) => runClaimed({ ...counted, workflowOf }, run)));
    return claimed.length;
  }

  async function runDue(): Promise<number> {
    let total = 0;
    for (;;) {
      const n = await once(batchSize);
      total += n;
      if (n === 0) return total;
    }
  }

  function schedule(ms: number): void {
    if (stopped) return;
    timer = setTimeout(() => {
      const began = Date.now();
      const limit = yielding.sending() ? Math.min(SMALL_BATCH, batchSize) : ramp;
      messages = 0;
      running = once(limit).then(
        (n) => {
          ramp = n >= limit ? Math.min(ramp * 2, batchSize) : Math.min(SMALL_BATCH, batchSize);
          // The batch's messages count in the share too: each takes a delivery slot before the broadcast's.
          const rest = yielding.restAfter(Date.now() - began, messages);
          schedule(Math.max(n >= limit ? 0 : pollMs, rest));
        },
        (error: unknown) => {
          // An outage is logged once, when it starts and ends, by the watched store (context/store-health.ts).
          if (!isStoreOutage(error)) logger.error({ err: error }, 'automations: claiming due runs failed');
          schedule(pollMs);
        },
      );
    }, ms);
    timer.unref?.();
  }

  return {
    runDue,
    start() {
      if (!stopped) return;
      stopped = false;
      schedule(0);
    },
    async stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
      await running.catch(() => undefined);
    },
  };
}
