import { z } from 'zod';
import { newId } from '../base/ids.js';
import type { EventOutbox } from '../events/event-outbox.js';
import { normalizeAddress, toValidationIssues, validationError } from '../request/index.js';
import type { TransactionStore } from '../store/app-transaction-store.js';
import type { RunRecord, WorkflowRecord } from '../store/automation-records.js';
import type { OutboxWrite } from '../store/event-records.js';
import type { TrackResult } from './automation-types.js';
import { runEvent } from './run-events.js';
import { EVENT_NAME } from './workflow-schema.js';
import { definitionOf } from './workflow-versions.js';

/** The most JSON a tracked event's properties hold. */
const MAX_PROPERTIES_BYTES = 64 * 1024;

/** The body of `track` and `POST /events/track` (its JSON Schema is in the OpenAPI document). */
export const trackRequestSchema = z.strictObject({
  event: z.string().regex(EVENT_NAME, 'An event name is 1 to 128 of A-Z a-z 0-9 . _ : -'),
  contact: z.email({ message: 'Must be an email address' }).max(320),
  properties: z
    .record(z.string(), z.unknown())
    .refine((p) => JSON.stringify(p).length <= MAX_PROPERTIES_BYTES, 'At most 64 KiB of JSON')
    .optional(),
  id: z.string().min(1).max(255).optional(),
});

/** The store roles `track` writes through: the engine's, or those bound to the app's transaction. */
export type TrackStore = Pick<TransactionStore, 'findTriggered' | 'getWorkflowVersion' | 'trackEvent'>;

/**
 * Records a tracked event and starts the runs of the workflows it triggers, in one store call (one
 * transaction): the event's id makes a repeat a no-op, and each run's entry key applies the workflow's
 * re-entry rule in the store's unique key, so that concurrent calls never start two runs it forbids.
 * `startWorkflows: false` records the event and wakes the runs listening to it, and starts none (a
 * message event of an automation's own message).
 */
export async function trackEvent(
  store: TrackStore,
  auth: { projectId: string; mode: 'live' | 'sandbox' },
  input: unknown,
  now: Date,
  outbox?: EventOutbox,
  options: { startWorkflows?: boolean } = {},
): Promise<TrackResult & { runs: RunRecord[] }> {
  const parsed = trackRequestSchema.safeParse(input);
  if (!parsed.success) throw validationError(toValidationIssues(parsed.error.issues));
  const body = parsed.data;
  const event = {
    projectId: auth.projectId,
    id: body.id ?? newId('evt', now.getTime()),
    name: body.event,
    contact: normalizeAddress(body.contact),
    properties: body.properties ?? {},
    at: now,
  };
  const workflows =
    options.startWorkflows === false ? [] : await store.findTriggered(auth.projectId, event.name);
  const runs: Array<{ run: RunRecord; outbox?: OutboxWrite }> = [];
  for (const workflow of workflows) {
    const run = await newRun(store, workflow, event, auth.mode, now);
    runs.push({
      run,
      ...(outbox ? { outbox: await runEvent(outbox, run, 'automation.run_started', now) } : {}),
    });
  }
  const { recorded, started } = await store.trackEvent({ event, runs });
  return {
    id: event.id,
    recorded,
    started: started.map((r) => ({ run: r.id, workflow: r.workflowId })),
    runs: started,
  };
}

async function newRun(
  store: TrackStore,
  workflow: WorkflowRecord,
  event: { id: string; contact: string; properties: Record<string, unknown> },
  mode: 'live' | 'sandbox',
  now: Date,
): Promise<RunRecord> {
  const definition = await definitionOf(store, workflow.id, workflow.version);
  const id = newId('run', now.getTime());
  const entryKey =
    definition.reentry === 'once' ? 'once' : definition.reentry === 'one-at-a-time' ? 'active' : event.id;
  return {
    id,
    projectId: workflow.projectId,
    workflowId: workflow.id,
    version: workflow.version,
    contact: event.contact,
    triggerEventId: event.id,
    entryKey,
    mode,
    status: 'active',
    step: definition.steps[0]?.id ?? null,
    stepStartedAt: now,
    dueAt: now,
    timerAt: null,
    listens: definition.exitOn,
    data: event.properties,
    sent: {},
    endReason: null,
    startedAt: now,
    updatedAt: now,
    endedAt: null,
  };
}
