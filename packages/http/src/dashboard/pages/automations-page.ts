import type { EventView, RunStatus, RunView, WorkflowStats, WorkflowView } from '@mailroom/core';
import { html, raw, type SafeHtml } from '../../pages/html.js';
import { badge, copyableRef, pager, time } from '../fragments.js';
import { layout, type PageContext } from '../layout.js';
import { query } from '../urls.js';
import { workflowDiagram } from '../workflow-diagram.js';

/** A contact's automation timeline: the starts and ends of its runs, oldest first. */
export interface ContactRuns {
  contact: string;
  events: EventView[];
  /** The cursor of the next page, or null. */
  next: string | null;
}

/** The runs listing of a workflow's page, as asked for. */
export interface RunsListing {
  runs: RunView[];
  status: RunStatus | undefined;
  /** The run id the page starts after (a later page), if any. */
  after: string | undefined;
  /** The cursor of the next page, or null. */
  next: string | null;
}

const RUN_STATUSES: readonly RunStatus[] = ['active', 'completed', 'exited'];

/** A workflow's page. */
export function workflowUrl(root: string, id: string): string {
  return `${root}/automations/${encodeURIComponent(id)}`;
}

/** Runs of a workflow as entered, waiting (active), done (completed) and exited. */
function runCounts(w: WorkflowView): SafeHtml {
  const { active, completed, exited } = w.runs;
  return html`<div class="counts" data-runs><span>entered <b data-count="entered">${active + completed + exited}</b></span><span>waiting <b data-count="waiting">${active}</b></span><span>done <b data-count="done">${completed}</b></span><span>exited <b data-count="exited">${exited}</b></span></div>`;
}

/**
 * The project's workflows (issue 39), each with its runs entered, waiting, done and exited; and, with
 * `?contact=`, that contact's automation timeline (runs started, completed, exited, with why).
 */
export function automationsPage(
  ctx: PageContext,
  workflows: WorkflowView[],
  contact: ContactRuns | null,
): SafeHtml {
  const rows = workflows.map(
    (w) =>
      html`<tr data-workflow="${w.id}"><td data-label="Workflow"><a href="${workflowUrl(ctx.root, w.id)}">${w.name}</a><div class="muted mono">${w.id}</div></td><td data-label="Status">${badge(w.status)}</td><td data-label="Trigger"><code>${w.trigger}</code></td><td data-label="Version">${w.version}</td><td data-label="Runs">${runCounts(w)}</td><td data-label="Updated">${time(w.updatedAt)}</td></tr>`,
  );
  const table =
    workflows.length === 0
      ? html`<p class="card muted">No workflows yet (<code>POST /automations</code> or <code>mailroom automation create FILE</code>).</p>`
      : html`<table class="cards"><thead><tr><th>Workflow</th><th>Status</th><th>Trigger</th><th>Version</th><th>Runs</th><th>Updated</th></tr></thead><tbody>${rows}</tbody></table>`;
  const search = html`<form method="get" action="${ctx.root}/automations" class="card"><label for="automation-contact">A contact's automation timeline</label> <input id="automation-contact" name="contact" type="email" required value="${contact?.contact ?? ''}"> <button type="submit">Show</button></form>`;
  return layout(
    ctx,
    'Automations',
    'automations',
    html`<h1>Automations</h1>${table}${search}${contact ? contactSection(ctx, contact) : ''}`,
  );
}

function contactSection(ctx: PageContext, c: ContactRuns): SafeHtml {
  const rows = c.events.map((e) => {
    const a = automationOf(e);
    const what =
      e.type === 'automation.run_started'
        ? 'started'
        : e.type === 'automation.run_completed'
          ? 'completed'
          : e.type === 'automation.run_exited'
            ? 'exited'
            : e.type;
    return html`<tr data-run-event="${e.type}"><td data-label="When">${time(new Date(e.created_at))}</td><td data-label="Run"><code>${a.run_id ?? ''}</code></td><td data-label="Workflow">${
      a.workflow_id ? html`<a href="${workflowUrl(ctx.root, a.workflow_id)}">${a.workflow_id}</a>` : ''
    } <span class="muted">v${a.version ?? '?'}</span></td><td data-label="What">${badge(what)}${
      a.reason && a.reason !== 'completed' ? html` <span class="muted">${a.reason}</span>` : ''
    }</td><td data-label="Trigger event"><code>${a.trigger_event_id ?? ''}</code></td></tr>`;
  });
  const timeline =
    c.events.length === 0
      ? html`<p class="muted">No automation runs for this address.</p>`
      : html`<table class="cards"><thead><tr><th>When</th><th>Run</th><th>Workflow</th><th>What</th><th>Trigger event</th></tr></thead><tbody>${rows}</tbody></table>`;
  const more = c.next
    ? html`<p><a href="${ctx.root}/automations${query({ contact: c.contact, after: c.next })}">Later events</a></p>`
    : '';
  return html`<section class="card" data-contact-timeline><h2>${c.contact}</h2>${timeline}${more}</section>`;
}

/** The `automation` member of a run event's data. */
function automationOf(e: EventView): {
  workflow_id?: string;
  run_id?: string;
  version?: number;
  trigger_event_id?: string;
  reason?: string;
} {
  const a = (e.data as { automation?: unknown }).automation;
  return typeof a === 'object' && a !== null ? (a as ReturnType<typeof automationOf>) : {};
}

/** One workflow: facts, its steps drawn with the runs at each, and its runs (newest first, by status). */
export function workflowPage(
  ctx: PageContext,
  w: WorkflowView,
  stats: WorkflowStats,
  listing: RunsListing,
): SafeHtml {
  const self = workflowUrl(ctx.root, w.id);
  const facts = html`<div class="card"><dl class="facts"><dt>Id</dt><dd>${copyableRef(w.id)}</dd><dt>Status</dt><dd>${badge(w.status)}</dd><dt>Trigger</dt><dd><code>${w.trigger}</code></dd><dt>Version</dt><dd>${w.version} <span class="muted">(runs stay on the version they started with)</span></dd><dt>Runs</dt><dd>${runCounts(w)}</dd><dt>Created</dt><dd>${time(w.createdAt)}</dd><dt>Updated</dt><dd>${time(w.updatedAt)}</dd></dl></div>`;
  const options = RUN_STATUSES.map(
    (s) => html`<option value="${s}"${s === listing.status ? raw(' selected') : ''}>${s}</option>`,
  );
  const form = html`<form class="search" method="get" action="${self}"><select name="status" aria-label="Status"><option value="">any status</option>${options}</select><button type="submit">Show</button></form>`;
  const rows = listing.runs.map(
    (r) =>
      html`<tr data-run="${r.id}"><td data-label="Run"><code>${r.id}</code></td><td data-label="Contact"><a href="${ctx.root}/automations${query({ contact: r.contact })}">${r.contact}</a></td><td data-label="Status">${badge(r.status)}</td><td data-label="Where">${
        r.status === 'active'
          ? html`at <code>${r.step ?? ''}</code>, due ${time(r.dueAt)}`
          : html`<span class="muted">${r.endReason ?? ''}</span>`
      }</td><td data-label="Version">${r.version}</td><td data-label="Started">${time(r.startedAt)}</td><td data-label="Ended">${time(r.endedAt)}</td></tr>`,
  );
  const table =
    listing.runs.length === 0
      ? html`<p class="card muted">No runs.</p>`
      : html`<table class="cards"><thead><tr><th>Run</th><th>Contact</th><th>Status</th><th>Where</th><th>Version</th><th>Started</th><th>Ended</th></tr></thead><tbody>${rows}</tbody></table>`;
  const keep = { status: listing.status };
  const first = listing.after ? `${self}${query(keep)}` : null;
  const next = listing.next ? `${self}${query({ ...keep, after: listing.next })}` : null;
  return layout(
    ctx,
    w.name,
    'automations',
    html`<p class="muted"><a href="${ctx.root}/automations">Automations</a> /</p><h1>${w.name}</h1>${facts}<h2>Steps</h2><div class="card">${workflowDiagram(w.definition, w.runs, stats.steps)}<p class="muted">Waiting: runs at the step now. Entered, passed and exited: the runs that arrived at the step, moved on from it, and ended there (an exit event, an exit step, a failure, the workflow deleted, the contact erased), over the workflow's life. The end counts runs done (completed) and exited (an exit event, an exit step, the workflow deleted, a failure).</p></div><h2>Runs</h2>${form}${table}${pager(first, next)}`,
  );
}
