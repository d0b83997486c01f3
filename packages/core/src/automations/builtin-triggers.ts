import type { BaseContext } from '../context/base-context.js';
import type { EventRecord, EventType } from '../store/event-records.js';
import { trackEvent } from './track-event.js';
import { definitionOf } from './workflow-versions.js';

/**
 * The built-in events, which the app does not track: `topic.subscribed` (a contact subscribed to a topic;
 * property `topic`), which may start a workflow, and a message's own events (`email.sent`,
 * `email.opened`, `email.clicked`, `email.bounced`, for the contact it went to; properties `mailing`,
 * `url`, `bounce`), which a run may wait for or exit on (not start on: a workflow's own messages would
 * start it again). They are read from the event outbox, which is written with the change itself.
 */
export const BUILTIN_EVENTS = {
  'email.sent': 'email.sent',
  'email.opened': 'email.opened',
  'email.clicked': 'email.clicked',
  'email.bounced': 'email.bounced',
  'topic.subscribed': 'contact.topics_changed',
} as const satisfies Record<string, EventType>;

type BuiltinName = keyof typeof BUILTIN_EVENTS;

const PAGE = 500;
/**
 * How far back each look reads again. Event ids are ordered by time to the millisecond only, and a
 * transaction may commit after a later one: reading the last minute again (skipping the ids already
 * tracked) finds an event that committed late.
 */
const OVERLAP_MS = 60_000;

/**
 * Follows each project's event outbox and tracks the built-in events its workflows use, each under the
 * outbox event's own id (with the built-in name), so that reading an event twice (after a restart, or by
 * two workers) starts nothing twice. A project is followed from the oldest creation time of its workflows
 * that use a built-in event: events from before a workflow existed start nothing.
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
    const types = [...new Set([...use.names].map((n) => BUILTIN_EVENTS[n]))];
    const cursor = cursors.get(projectId) ?? { fromMs: use.since.getTime(), seen: new Map<string, number>() };
    cursors.set(projectId, cursor);
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
        for (const input of builtinInputs(event, use.names)) {
          await trackEvent(store, { projectId, mode: 'live' }, input, event.createdAt, ctx.outbox);
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
function builtinInputs(event: EventRecord, names: Set<BuiltinName>): Array<Record<string, unknown>> {
  const contact = event.address ?? event.data.delivery?.address;
  if (!contact) return [];
  const mailing = event.data.mailing?.ref;
  if (event.type === 'contact.topics_changed') {
    if (!names.has('topic.subscribed')) return [];
    return (event.data.topics ?? [])
      .filter((t) => t.state === 'subscribed')
      .map((t) => ({
        event: 'topic.subscribed',
        contact,
        id: `${event.id}:${t.key}`,
        properties: { topic: t.key, source: event.data.source ?? null },
      }));
  }
  const name = event.type as BuiltinName;
  if (!names.has(name)) return [];
  return [
    {
      event: name,
      contact,
      id: event.id,
      properties: {
        ...(mailing ? { mailing } : {}),
        ...(event.data.url ? { url: event.data.url } : {}),
        ...(event.data.bounce ? { bounce: event.data.bounce.reason } : {}),
      },
    },
  ];
}
