import { changeConsent } from '../consent/consent-change.js';
import type { BaseContext } from '../context/base-context.js';
import type { ClaimedRun } from '../store/automation-records.js';
import type { Json } from '../store/records.js';
import type { StepOutcome } from './run-place.js';
import type { Step } from './workflow-schema.js';

/** An `update-contact` step. Idempotent: a repeat after a crash merges the same traits and changes no topic twice. */
export async function updateContactStep(
  ctx: BaseContext,
  run: ClaimedRun,
  step: Extract<Step, { type: 'update-contact' }>,
): Promise<StepOutcome> {
  await updateContact(ctx, run, step);
  return { go: 'next' };
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
