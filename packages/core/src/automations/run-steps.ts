import { isMailroomError, isStoreOutage } from '../base/errors.js';
import { derivedId } from '../base/ids.js';
import { isTimeZone, nextLocalTime, parseClockTime } from '../base/local-time.js';
import { changeConsent } from '../consent/consent-change.js';
import type { BaseContext } from '../context/base-context.js';
import type { CapabilitySetup } from '../context/capability.js';
import type { ClaimedRun, RunAdvance } from '../store/automation-records.js';
import type { OutboxWrite } from '../store/event-records.js';
import type { Json } from '../store/records.js';
import type { AutomationEvents } from './automation-events.js';
import { evaluateCondition } from './condition.js';
import { runEvent } from './run-events.js';
import { branches, durationMs, type Step, type WorkflowDefinition } from './workflow-schema.js';
import { definitionOf } from './workflow-versions.js';

/** The most steps one claim walks through (a definition has at most 100 and no cycle). */
const MAX_STEPS_PER_CLAIM = 200;
/** How long a run waits before its step is tried again after a failure the store may get over. */
const RETRY_MS = 60_000;

/** What running a claimed run needs from the engine. */
export interface RunParts {
  ctx: BaseContext;
  send: CapabilitySetup['send'];
}

/**
 * Walks one claimed run through its steps until it waits or ends, writing its place after each step
 * that did something outside the run (a send) and when it waits or ends, every write fenced by the
 * claim's lease token. A crash repeats at most the step in flight; a send step repeated sends nothing
 * again (its idempotency key is the run's id and the step's: a step is reached at most once per run, as
 * a definition has no cycle). Returns whether the run advanced or ended.
 */
export async function runClaimed(parts: RunParts, claimed: ClaimedRun): Promise<boolean> {
  const { ctx } = parts;
  const { store, clock, logger } = ctx;
  let run = claimed;
  const fenced = async (advance: RunAdvance, release: boolean, extra?: OutboxWrite): Promise<boolean> => {
    const now = clock.now();
    const type =
      advance.status === 'completed'
        ? 'automation.run_completed'
        : advance.status === 'exited'
          ? 'automation.run_exited'
          : undefined;
    const ended = type
      ? await runEvent(ctx.outbox, run, type, now, advance.endReason ?? undefined)
      : undefined;
    const outbox =
      ended && extra
        ? { events: [...extra.events, ...ended.events], messages: [...extra.messages, ...ended.messages] }
        : (extra ?? ended);
    const ok = await store.advanceRun(
      run.id,
      run.leaseToken,
      advance,
      { release, wakeSeq: run.wakeSeq, now },
      outbox,
    );
    if (ok) run = { ...run, ...advance, updatedAt: now };
    if (ok && advance.status !== 'active') {
      ctx.events.view<AutomationEvents>().emit('automationRunEnded', {
        projectId: run.projectId,
        workflowId: run.workflowId,
        runId: run.id,
        contact: run.contact,
        status: advance.status,
        reason: advance.endReason ?? advance.status,
      });
    }
    return ok;
  };
  const end = (status: 'completed' | 'exited', reason: string): RunAdvance => {
    const now = clock.now();
    return {
      status,
      sent: run.sent,
      step: null,
      stepStartedAt: now,
      dueAt: null,
      timerAt: null,
      listens: [],
      endReason: reason,
      endedAt: now,
    };
  };

  try {
    const workflow = await store.getWorkflow(run.projectId, run.workflowId);
    if (!workflow || workflow.status === 'deleted') return fenced(end('exited', 'workflow-deleted'), true);
    const definition = await definitionOf(store, run.workflowId, run.version);
    for (let walked = 0; walked < MAX_STEPS_PER_CLAIM; walked++) {
      const now = clock.now();
      const exit = await firstEvent(ctx, run, definition.exitOn, run.startedAt);
      if (exit) return fenced(end('exited', `exit-event:${exit}`), true);
      const index = definition.steps.findIndex((s) => s.id === run.step);
      const step = definition.steps[index];
      if (!step) return fenced(end('completed', 'completed'), true);
      const following = definition.steps[index + 1]?.id;
      const go = (field: string): RunAdvance => {
        const to = branches(step, following).find(([f]) => f === field)?.[1] ?? 'end';
        if (to === 'end') return end('completed', 'completed');
        return { ...waiting(run, definition), step: to, stepStartedAt: now, dueAt: now, timerAt: null };
      };
      let next: RunAdvance;
      switch (step.type) {
        case 'wait':
        case 'wait-for-event': {
          // A wait counts from the run's arrival at the step, however late a worker looks at it.
          const startedAt = run.stepStartedAt;
          const timerAt = run.timerAt ?? (await timerOf(ctx, run, step, startedAt));
          if (step.type === 'wait-for-event') {
            const came = await firstEvent(ctx, run, [step.event], startedAt);
            if (came) {
              next = go('onEvent');
              break;
            }
          }
          if (now.getTime() >= timerAt.getTime()) {
            next = go(step.type === 'wait' ? 'next' : 'onTimeout');
            break;
          }
          // Sleep until the timer; an event it listens to wakes it sooner (`trackEvent`).
          const listens =
            step.type === 'wait-for-event' ? [...definition.exitOn, step.event] : definition.exitOn;
          return fenced(
            { ...waiting(run, definition), stepStartedAt: startedAt, timerAt, dueAt: timerAt, listens },
            true,
          );
        }
        case 'send': {
          const sent = await sendStep(parts, run, step);
          if (sent === 'retry') {
            return fenced({ ...waiting(run, definition), dueAt: new Date(now.getTime() + RETRY_MS) }, true);
          }
          if (typeof sent === 'string') return fenced(end('exited', `failed: ${sent}`), true);
          if (sent.ref) run = { ...run, sent: { ...run.sent, [step.id]: sent.ref } };
          next = go('next');
          // Written before anything else happens: a crash after this never repeats the send.
          if (!(await fenced(next, next.status !== 'active'))) return false;
          if (next.status !== 'active') return true;
          continue;
        }
        case 'condition': {
          const profile =
            step.if.trait === undefined ? undefined : await store.getProfile(run.projectId, run.contact);
          const holds =
            step.if.message === undefined
              ? evaluateCondition(step.if, profile?.traits ?? {}, run.data)
              : await messageCondition(ctx, run, step.if.message, step.if.op);
          next = go(holds ? 'onTrue' : 'onFalse');
          break;
        }
        case 'update-contact':
          // Idempotent: a repeat after a crash merges the same traits and changes no topic twice.
          await updateContact(ctx, run, step);
          next = go('next');
          break;
        case 'webhook': {
          // The call is an event for the one endpoint, written with the run's next place: once, however
          // often the step is repeated before that write; the webhook sender signs, sends and retries it.
          next = go('next');
          const call = await webhookCall(ctx, run, step, now);
          if (!(await fenced(next, next.status !== 'active', call))) return false;
          if (next.status !== 'active') return true;
          continue;
        }
        case 'exit':
          return fenced(end('exited', 'exit-step'), true);
      }
      if (next.status !== 'active') return fenced(next, true);
      run = { ...run, ...next };
    }
    // A definition cannot get here (no cycle, at most 100 steps); leave the run for the next claim.
    return fenced({ ...waiting(run, definition), dueAt: clock.now() }, true);
  } catch (error) {
    // Never a crash of the worker: the run waits and is tried again.
    if (!isStoreOutage(error))
      logger.error({ err: error, runId: run.id }, 'automation run failed; retrying later');
    await store
      .advanceRun(
        run.id,
        run.leaseToken,
        { ...waitingAsIs(run), dueAt: new Date(clock.now().getTime() + RETRY_MS) },
        { release: true, wakeSeq: run.wakeSeq, now: clock.now() },
      )
      .catch(() => undefined);
    return false;
  }
}

/**
 * When a wait that began at `startedAt` ends: after its duration, or at the next `until` time of day in
 * the contact's zone (its timezone trait; UTC when it has none or an unknown one).
 */
async function timerOf(ctx: BaseContext, run: ClaimedRun, step: Step, startedAt: Date): Promise<Date> {
  if (step.type === 'wait-for-event') return new Date(startedAt.getTime() + durationMs(step.timeout));
  if (step.type !== 'wait') throw new Error(`step ${step.id} is not a wait`);
  if (step.duration !== undefined) return new Date(startedAt.getTime() + durationMs(step.duration));
  const profile = await ctx.store.getProfile(run.projectId, run.contact);
  const zone = profile?.traits[step.timezoneTrait ?? 'timezone'];
  const at = parseClockTime(step.until ?? '') ?? 0;
  return new Date(nextLocalTime(startedAt.getTime(), at, isTimeZone(zone) ? zone : 'UTC'));
}

/** The run's place as it is, active, listening to its exit events. */
function waiting(run: ClaimedRun, definition: WorkflowDefinition): RunAdvance {
  return { ...waitingAsIs(run), listens: definition.exitOn };
}

function waitingAsIs(run: ClaimedRun): RunAdvance {
  return {
    status: 'active',
    sent: run.sent,
    step: run.step,
    stepStartedAt: run.stepStartedAt,
    dueAt: run.dueAt,
    timerAt: run.timerAt,
    listens: run.listens,
    endReason: null,
    endedAt: null,
  };
}

/**
 * Whether the message an earlier send step of the run sent was opened (or clicked) by a person: its
 * `email.opened` / `email.clicked` events, machine ones (privacy proxies, link scanners) left out. False
 * when the step sent nothing.
 */
async function messageCondition(
  ctx: BaseContext,
  run: ClaimedRun,
  stepId: string,
  op: string,
): Promise<boolean> {
  const ref = run.sent[stepId];
  if (!ref) return op === 'not-opened' || op === 'not-clicked';
  const type = op === 'clicked' || op === 'not-clicked' ? 'email.clicked' : 'email.opened';
  const events = await ctx.store.listEvents(run.projectId, { types: [type], mailingRef: ref }, { limit: 50 });
  const human = events.some((e) => e.data.machine !== true);
  return op.startsWith('not-') ? !human : human;
}

/**
 * Merges the step's traits onto the contact's profile (made bare if it has none) and sets its topic
 * states through the consent change (a record of source `automation` and a `contact.topics_changed`
 * event for each change).
 */
async function updateContact(
  ctx: BaseContext,
  run: ClaimedRun,
  step: Extract<Step, { type: 'update-contact' }>,
): Promise<void> {
  const { store, clock } = ctx;
  if (step.traits) {
    let profile = await store.getProfile(run.projectId, run.contact);
    if (!profile) {
      await store.writeConsent({
        projectId: run.projectId,
        address: run.contact,
        records: [],
        now: clock.now(),
      });
      profile = await store.getProfile(run.projectId, run.contact);
    }
    const traits: Record<string, Json> = { ...(profile?.traits ?? {}) };
    for (const [key, value] of Object.entries(step.traits)) {
      if (value === null) delete traits[key];
      else traits[key] = value as Json;
    }
    await store.updateProfile(run.projectId, run.contact, { traits }, clock.now());
  }
  if (step.topics) {
    await changeConsent(ctx, {
      projectId: run.projectId,
      address: run.contact,
      topics: step.topics,
      source: 'automation',
    });
  }
  if (step.groups) await updateGroups(ctx, run, step.id, step.groups);
}

/**
 * Sets the contact's group memberships and writes their `contact.groups_changed` event in one store
 * change. The event names the run and the step, so that a step repeated after a crash (which writes it
 * again) starts a `group.added` workflow once: the built-in event's id is made of the run, step and group.
 * A group deleted since the definition was saved is left out.
 */
async function updateGroups(
  ctx: BaseContext,
  run: ClaimedRun,
  stepId: string,
  wanted: Record<string, boolean>,
): Promise<void> {
  const { store, clock } = ctx;
  const groups: Array<{ groupId: string; ref: string; member: boolean }> = [];
  for (const [ref, member] of Object.entries(wanted)) {
    const group = await store.getGroup(run.projectId, ref);
    if (group) groups.push({ groupId: group.id, ref, member });
  }
  if (groups.length === 0) return;
  const now = clock.now();
  const event = await ctx.outbox.event(
    run.projectId,
    'contact.groups_changed',
    now,
    { mailingRef: null, deliveryId: null, address: run.contact },
    {
      address: run.contact,
      groups: groups.map(({ ref, member }) => ({ ref, member })),
      source: 'automation',
      automation: {
        workflow_id: run.workflowId,
        run_id: run.id,
        version: run.version,
        trigger_event_id: run.triggerEventId,
        step: stepId,
      },
    },
  );
  await store.writeConsent(
    {
      projectId: run.projectId,
      address: run.contact,
      records: [],
      groups: groups.map(({ groupId, member }) => ({ groupId, member })),
      now,
    },
    event,
  );
}

/** The `automation.webhook` event of a webhook step, for its endpoint alone (none when it is gone or disabled). */
async function webhookCall(
  ctx: BaseContext,
  run: ClaimedRun,
  step: Extract<Step, { type: 'webhook' }>,
  now: Date,
): Promise<OutboxWrite | undefined> {
  const endpoint = await ctx.store.getWebhookEndpoint(step.endpoint);
  if (!endpoint || endpoint.projectId !== run.projectId || !endpoint.enabled) return undefined;
  return ctx.outbox.event(
    run.projectId,
    'automation.webhook',
    now,
    { mailingRef: null, deliveryId: null, address: run.contact },
    {
      address: run.contact,
      automation: {
        workflow_id: run.workflowId,
        run_id: run.id,
        version: run.version,
        trigger_event_id: run.triggerEventId,
        step: step.id,
        ...(step.payload ? { payload: step.payload } : {}),
      },
    },
    // Named by the step: it gets the call whatever event types it subscribes to.
    { ...endpoint, events: null },
  );
}

/** The first of `names` the contact got at or after `since`, the starting event left out. */
async function firstEvent(
  ctx: BaseContext,
  run: ClaimedRun,
  names: readonly string[],
  since: Date,
): Promise<string | undefined> {
  if (names.length === 0) return undefined;
  const events = await ctx.store.findEvents(run.projectId, run.contact, names, since, 2);
  return events.find((e) => e.id !== run.triggerEventId)?.name;
}

/**
 * Sends a step's message through the normal send path (sender, template, suppressions, topics and the
 * guard apply as to any send), under the step's idempotency key and a ref derived from the run and the
 * step (`stepMessageRef`). The store keeps a ref once per project, so the step's message is committed
 * exactly once however an earlier attempt ended: a key left `running` by a process that died is looked
 * up by that ref (committed: the step is done; not: the key is freed and the message sent now), and a
 * second commit racing a late first one is `CONFLICT`, never a second message. `sent`, `retry` (the
 * store may get over it), or why it cannot be sent (the run ends with it).
 */
async function sendStep(
  parts: RunParts,
  run: ClaimedRun,
  step: Extract<Step, { type: 'send' }>,
): Promise<{ ref: string | null } | 'retry' | string> {
  const { store, logger } = parts.ctx;
  const project = await store.getProject(run.projectId);
  if (!project) return 'the project is gone';
  const profile = await store.getProfile(run.projectId, run.contact);
  const body = {
    sender: step.sender,
    template: {
      ref: step.template,
      variables: { event: run.data, contact: { ...(profile?.traits ?? {}), address: run.contact } },
    },
    recipients: run.contact,
    ...(step.topic ? { options: { topic: step.topic } } : {}),
  };
  const idempotencyKey = stepIdempotencyKey(run.id, step.id);
  const ref = stepMessageRef(run, step.id);
  const committed = async () => (await store.getMailing(run.projectId, ref)) !== undefined;
  for (let attempt = 0; ; attempt++) {
    try {
      await parts.send({ project, mode: run.mode }, body, {
        idempotencyKey,
        ref,
        tags: [{ name: AUTOMATION_TAG, value: run.workflowId }],
      });
      return { ref };
    } catch (error) {
      // The message under the step's ref exists: an earlier attempt committed it (its key was dropped on
      // an error reported after the commit, or it expired). Sent once; not again.
      if (isMailroomError(error, 'CONFLICT') && (await committed())) return { ref };
      if (isMailroomError(error, 'IDEMPOTENCY_CONFLICT') && attempt === 0) {
        // The run is leased to this worker alone: a key still `running` was left by a process that died
        // between writing it and finishing the send, before or after the message committed.
        if (await committed()) {
          await store.finishIdempotent(run.projectId, idempotencyKey, { ref, status: 'queued' });
          return { ref };
        }
        logger.warn(
          { runId: run.id, step: step.id },
          'a crash left this step’s send unfinished before its message was written; sending it now',
        );
        await store.dropIdempotent(run.projectId, idempotencyKey);
        continue;
      }
      if (isMailroomError(error) && (error as { retryable?: boolean }).retryable) return 'retry';
      if (isMailroomError(error)) return (error as Error).message;
      throw error;
    }
  }
}

/**
 * The tag every message of an automation carries (its value: the workflow's id): a message event of such a
 * message starts no workflow (`builtin-triggers.ts`), so that workflows cannot start each other endlessly.
 */
export const AUTOMATION_TAG = 'mailroom.automation';

/** A send step's idempotency key: a step is reached at most once per run (a definition has no cycle). */
export function stepIdempotencyKey(runId: string, stepId: string): string {
  return `automation:${runId}:${stepId}`;
}

/**
 * The ref of a send step's message (`msg_…`, shaped as any message's): derived from the run and the
 * step, so every attempt of the step names the same message and the store writes it once.
 */
export function stepMessageRef(run: Pick<ClaimedRun, 'id' | 'startedAt'>, stepId: string): string {
  return derivedId('msg', run.startedAt.getTime(), stepIdempotencyKey(run.id, stepId));
}
