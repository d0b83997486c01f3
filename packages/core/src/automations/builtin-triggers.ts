import type { BaseContext } from '../context/base-context.js';
import type { EventRecord, EventType } from '../store/event-records.js';
import { AUTOMATION_TAG } from './step-send.js';
import { trackEvent } from './track-event.js';
import { definitionOf } from './workflow-versions.js';

/**
 * The built-in events, which the app does not track, each read from the outbox event types listed (written
 * with the change itself):
 * - `group.added`: a contact joined a group (property `group`, `source`): an update-contact step
 *   (`contact.groups_changed`), a signup form's group, at once or once confirmed (`contact.subscribed`
 *   without double opt-in, `contact.confirmed`).
 * - `topic.subscribed`: a contact subscribed to a topic (property `topic`, `source`).
 * - `topic.confirmed`: a contact confirmed a double opt-in signup to a topic (property `topic`, `form`).
 * - `email.sent`, `email.opened`, `email.clicked`, `email.bounced`: a message's own events, for the contact
 *   it went to (properties `mailing`, `url`, `bounce`). They start workflows only for messages no
 *   automation sent (tagged `mailroom.automation`): a workflow's message cannot start it, or another
 *   one, again. Runs wait for and exit on them whatever sent the message.
 */
export const BUILTIN_EVENTS = {
  'email.sent': ['email.sent'],
  'email.opened': ['email.opened'],
  'email.clicked': ['email.clicked'],
  'email.bounced': ['email.bounced'],
  'group.added': ['contact.groups_changed', 'contact.subscribed', 'contact.confirmed'],
  'topic.subscribed': ['contact.topics_changed'],
  'topic.confirmed': ['contact.confirmed'],
} as const satisfies Record<string, readonly EventType[]>;

type BuiltinName = keyof typeof BUILTIN_EVENTS;
const MESSAGE_EVENTS = new Set<string>(['email.sent', 'email.opened', 'email.clicked', 'email.bounced']);

const PAGE = 500;
/**
 * How far back each look reads again. Event ids are ordered by time to the millisecond only, and a
 * transaction may commit after a later one: reading the last minute again (skipping the ids already
 * tracked) finds an event that committed late.
 */
const OVERLAP_MS = 60_000;

/** One built-in event to track, and whether it may start workflows (not for an automation's message). */
interface BuiltinInput {
  input: Record<string, unknown>;
  mailing?: string;
}

/**
 * Follows each project's event outbox and tracks the built-in events its workflows use, each under an id
 * made from the outbox event's own (with the built-in name), so that reading an event twice (after a
 * restart, or by two workers) starts nothing twice. A project is followed from the oldest creation time
 * of its workflows that use a built-in event: events from before a workflow existed start nothing.
 */
export function createBuiltinTriggers(ctx: BaseContext): { poll(): Promise<number> } {
  const { store } = ctx;
  /** Per project: the time from which the next look reads, and the ids tracked since then. */
  const cursors = new Map<string, { fromMs: number; seen: Map<string, number> }>();

  async function namesInUse(
    projectId: string,
  ): Promise<{ names: Set<BuiltinName>; since: Date } | undefined> {
    const names = new Set<BuiltinName>();
    let since: Date | undefined;
    for (const workflow of await store.listWorkflows(projectId)) {
      const definition = await definitionOf(store, workflow.id, workflow.version);
      const used = [
        definition.trigger.event,
        ...definition.exitOn,
        ...definition.steps.flatMap((s) => (s.type === 'wait-for-event' ? [s.event] : [])),
      ].filter((name): name is BuiltinName => Object.hasOwn(BUILTIN_EVENTS, name));
      if (used.length === 0) continue;
      for (const name of used) names.add(name);
      if (!since || workflow.createdAt < since) since = workflow.createdAt;
    }
    return since ? { names, since } : undefined;
  }

  async function followProject(projectId: string): Promise<number> {
    const use = await namesInUse(projectId);
    if (!use) return 0;
    const types = [...new Set([...use.names].flatMap((n) => BUILTIN_EVENTS[n]))];
    const cursor = cursors.get(projectId) ?? { fromMs: use.since.getTime(), seen: new Map<string, number>() };
    cursors.set(projectId, cursor);
    // Whether a mailing was sent by an automation, read once per look.
    const byAutomation = new Map<string, Promise<boolean>>();
    const automationSent = (ref: string) => {
      let known = byAutomation.get(ref);
      if (!known) {
        known = store
          .getMailing(projectId, ref)
          .then((m) => (m?.content.tags ?? []).some((t) => t.name === AUTOMATION_TAG));
        byAutomation.set(ref, known);
      }
      return known;
    };
    // Event ids are time-ordered (`evt_` + time): this sorts before every event of that millisecond.
    let after = `evt_${cursor.fromMs.toString(36).padStart(9, '0')}`;
    let latest = cursor.fromMs;
    let tracked = 0;
    for (;;) {
      const events = await store.listEvents(projectId, { types }, { after, limit: PAGE });
      for (const event of events) {
        const at = event.createdAt.getTime();
        latest = Math.max(latest, at);
        if (cursor.seen.has(event.id)) continue;
        for (const { input, mailing } of builtinInputs(event, use.names)) {
          const startWorkflows = mailing === undefined || !(await automationSent(mailing));
          await trackEvent(store, { projectId, mode: 'live' }, input, event.createdAt, ctx.outbox, {
            startWorkflows,
          });
          tracked++;
        }
        cursor.seen.set(event.id, at);
      }
      if (events.length < PAGE) break;
      after = (events.at(-1) as EventRecord).id;
    }
    cursor.fromMs = Math.max(cursor.fromMs, latest - OVERLAP_MS);
    for (const [id, at] of cursor.seen) if (at < cursor.fromMs) cursor.seen.delete(id);
    return tracked;
  }

  return {
    async poll() {
      let tracked = 0;
      for (const project of await store.listProjects()) tracked += await followProject(project.id);
      return tracked;
    },
  };
}

/** The `track` inputs an outbox event makes, for the built-in names in use. */
function builtinInputs(event: EventRecord, names: Set<BuiltinName>): BuiltinInput[] {
  const contact = event.address ?? event.data.delivery?.address;
  if (!contact) return [];
  const out: BuiltinInput[] = [];
  const add = (name: BuiltinName, id: string, properties: Record<string, unknown>) => {
    if (names.has(name)) out.push({ input: { event: name, contact, id, properties } });
  };
  const { data } = event;
  switch (event.type) {
    case 'contact.topics_changed':
      for (const t of data.topics ?? []) {
        if (t.state === 'subscribed') {
          add('topic.subscribed', `${event.id}:${t.key}`, { topic: t.key, source: data.source ?? null });
        }
      }
      return out;
    case 'contact.groups_changed': {
      // An update-contact step repeated after a crash writes its event again: one id for both.
      const origin = data.automation
        ? `group.added:${data.automation.run_id}:${data.automation.step ?? ''}`
        : event.id;
      for (const g of data.groups ?? []) {
        if (g.member) add('group.added', `${origin}:${g.ref}`, { group: g.ref, source: data.source ?? null });
      }
      return out;
    }
    case 'contact.subscribed':
      // Without double opt-in the contact joins the form's group at once; with it, when it confirms.
      if (data.group && data.pending !== true) {
        add('group.added', `${event.id}:${data.group}`, { group: data.group, source: 'form' });
      }
      return out;
    case 'contact.confirmed':
      if (data.group) add('group.added', `${event.id}:${data.group}`, { group: data.group, source: 'form' });
      if (data.topic) {
        add('topic.confirmed', `${event.id}:${data.topic}`, {
          topic: data.topic,
          form: data.form_ref ?? null,
        });
      }
      return out;
    default: {
      if (!MESSAGE_EVENTS.has(event.type)) return out;
      const name = event.type as BuiltinName;
      if (!names.has(name)) return out;
      const mailing = data.mailing?.ref;
      out.push({
        input: {
          event: name,
          contact,
          id: event.id,
          properties: {
            ...(mailing ? { mailing } : {}),
            ...(data.url ? { url: data.url } : {}),
            ...(data.bounce ? { bounce: data.bounce.reason } : {}),
          },
        },
        ...(mailing ? { mailing } : {}),
      });
      return out;
    }
  }
}
