import type { AuthContext, Mailroom, RunStatus } from '@mailroom/core';
import type { SafeHtml } from '../pages/html.js';
import type { PageContext } from './layout.js';
import { automationsPage, type ContactRuns, workflowPage } from './pages/automations-page.js';

/** Runs listed on a workflow's page. */
const RUNS_PER_PAGE = 50;
/** The event types of a contact's automation timeline. */
const RUN_EVENTS = ['automation.run_started', 'automation.run_completed', 'automation.run_exited'] as const;

function byTimeStartsFirst(a: { created_at: string; type: string }, b: { created_at: string; type: string }) {
  const rank = (type: string) => (type === 'automation.run_started' ? 0 : 1);
  return Date.parse(a.created_at) - Date.parse(b.created_at) || rank(a.type) - rank(b.type);
}

/**
 * The automations pages (issue 39) over the engine's reads: the workflows with their run counts and, with
 * `?contact=`, the contact's timeline (its run events, read by address); one workflow's steps and runs.
 * Every read is scoped to the signed-in project (another project's workflow is `NOT_FOUND`).
 */
export async function automationsView(
  mailroom: Mailroom,
  auth: AuthContext,
  ctx: PageContext,
  q: URLSearchParams,
): Promise<SafeHtml> {
  const address = (q.get('contact') ?? '').trim().toLowerCase().slice(0, 320);
  const [workflows, events] = await Promise.all([
    mailroom.automations.list(auth),
    address === ''
      ? Promise.resolve(undefined)
      : mailroom.listEvents(auth, {
          address,
          types: [...RUN_EVENTS],
          limit: 100,
          ...(q.get('after') ? { after: q.get('after') ?? '' } : {}),
        }),
  ]);
  // Events of one millisecond (a run that starts and exits in one call) come in id order, which is random
  // within the millisecond: a start is shown before the end it led to.
  const contact: ContactRuns | null = events
    ? { contact: address, events: [...events.items].sort(byTimeStartsFirst), next: events.next }
    : null;
  return automationsPage(ctx, workflows, contact);
}

/** One workflow's page: its diagram with counts, and a page of its runs (`?status=`, `?after=`). */
export async function workflowView(
  mailroom: Mailroom,
  auth: AuthContext,
  ctx: PageContext,
  id: string,
  q: URLSearchParams,
): Promise<SafeHtml> {
  const given = q.get('status') ?? '';
  const status = (['active', 'completed', 'exited'] as const).find((s) => s === given) as
    | RunStatus
    | undefined;
  const after = q.get('after') || undefined;
  const [workflow, stats, runs] = await Promise.all([
    mailroom.automations.get(auth, id),
    mailroom.automations.stats(auth, id),
    mailroom.automations.runs(auth, id, {
      limit: RUNS_PER_PAGE + 1,
      ...(status ? { status } : {}),
      ...(after ? { after } : {}),
    }),
  ]);
  const shown = runs.slice(0, RUNS_PER_PAGE);
  return workflowPage(ctx, workflow, stats, {
    runs: shown,
    status,
    after,
    next: runs.length > RUNS_PER_PAGE ? (shown.at(-1)?.id ?? null) : null,
  });
}
