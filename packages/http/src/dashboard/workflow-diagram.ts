/**
 * A workflow drawn as its steps (issue 39), on the server as inline SVG like the activity charts: no
 * script, no library, presentation attributes only (nothing the page's Content-Security-Policy must
 * allow). The trigger on top, one box per step in the definition's order with the runs waiting there,
 * and, given the workflow's step counts, the runs that entered, passed and exited it; the end at the bottom
 * with the runs that completed and exited. An edge to the box right below is a
 * straight arrow; a branch that jumps is drawn on the right, labelled with its field (`onTimeout`, ...).
 * Every text goes through `html`, so step ids, events and template refs are escaped.
 */
import {
  type RunCounts,
  type StepStats,
  stepBranches,
  type WorkflowDefinition,
  type WorkflowStep,
} from '@mailroom/core';
import { html, type SafeHtml } from '../pages/html.js';

const BOX_W = 340;
const BOX_H = 64;
const GAP = 30;
const LEFT = 10;
const LANE = 16;
const TOP = 10;

/** What a step does, in a few words. */
export function stepSummary(step: WorkflowStep): string {
  switch (step.type) {
    case 'send':
      return `send ${step.template}`;
    case 'wait':
      return step.duration !== undefined ? `wait ${step.duration}` : `wait until ${step.until ?? ''} local`;
    case 'wait-for-event':
      return `wait for ${step.event} up to ${step.timeout}`;
    case 'condition':
      return `if ${conditionText(step.if)}`;
    case 'update-contact':
      return `update contact (${[
        ...Object.keys(step.traits ?? {}).map((t) => `trait ${t}`),
        ...Object.keys(step.topics ?? {}).map((t) => `topic ${t}`),
      ].join(', ')})`;
    case 'webhook':
      return `webhook ${step.endpoint}`;
    case 'exit':
      return 'exit';
  }
}

function conditionText(c: Record<string, unknown>): string {
  const subject =
    c.trait !== undefined
      ? `trait ${String(c.trait)}`
      : c.property !== undefined
        ? `event ${String(c.property)}`
        : c.message !== undefined
          ? `message of ${String(c.message)}`
          : 'condition';
  const value = c.value === undefined ? '' : ` ${JSON.stringify(c.value)}`;
  return `${subject} ${String(c.op ?? '')}${value}`.trim();
}

/**
 * The diagram of `definition` with the runs of `counts` and, per step, of `stats` (the workflow's step
 * counts); the `<svg>` carries `data-step-*` for tests.
 */
export function workflowDiagram(
  definition: WorkflowDefinition,
  counts: RunCounts,
  stats: readonly StepStats[] = [],
): SafeHtml {
  const statsOf = new Map(stats.map((s) => [s.id, s]));
  const steps = definition.steps;
  const row = (i: number) => TOP + i * (BOX_H + GAP);
  // Rows: 0 the trigger, 1..n the steps, n+1 the end.
  const rowOf = new Map<string, number>(steps.map((s, i) => [s.id, i + 1]));
  rowOf.set('end', steps.length + 1);
  const jumps: Array<{ from: number; to: number; label: string }> = [];
  const arrows: SafeHtml[] = [];
  const straight = (from: number, label: string | null) => {
    const x = LEFT + BOX_W / 2;
    const y1 = row(from) + BOX_H;
    const y2 = row(from + 1);
    arrows.push(
      html`<line x1="${x}" y1="${y1}" x2="${x}" y2="${y2 - 3}" stroke="#5f6b76" stroke-width="1.5" marker-end="url(#wf-arrow)"/>${
        label &&
        html`<text x="${x + 6}" y="${(y1 + y2) / 2 + 4}" font-size="11" fill="#5f6b76">${label}</text>`
      }`,
    );
  };
  straight(0, null);
  steps.forEach((step, i) => {
    for (const [field, target] of stepBranches(step, steps[i + 1]?.id)) {
      const to = rowOf.get(target) ?? steps.length + 1;
      if (to === i + 2) straight(i + 1, field === 'next' ? null : field);
      else jumps.push({ from: i + 1, to, label: field });
    }
  });
  jumps.forEach((j, k) => {
    const x0 = LEFT + BOX_W;
    const x = x0 + LANE * (k + 1);
    const y1 = row(j.from) + BOX_H / 2;
    const y2 = row(j.to) + BOX_H / 2 + (j.to < j.from ? -6 : 6);
    arrows.push(
      html`<path d="M${x0} ${y1} H${x} V${y2} H${x0 + 3}" fill="none" stroke="#2456c8" stroke-width="1.2" marker-end="url(#wf-arrow-b)"/><text x="${x + 3}" y="${y1 - 3}" font-size="10" fill="#2456c8">${j.label}</text>`,
    );
  });
  const box = (
    r: number,
    title: string,
    detail: string,
    count: string,
    fill: string,
    attrs: SafeHtml | string = '',
    moves = '',
  ) =>
    html`<g ${attrs}><rect x="${LEFT}" y="${row(r)}" width="${BOX_W}" height="${BOX_H}" rx="7" fill="${fill}" stroke="#8a96a3"/><text x="${LEFT + 10}" y="${row(r) + 20}" font-size="13" font-weight="600" fill="#1d2125">${clip(title, 40)}</text><text x="${LEFT + 10}" y="${row(r) + 38}" font-size="11" fill="#5f6b76">${clip(detail, 52)}</text><text x="${LEFT + BOX_W - 10}" y="${row(r) + 20}" font-size="12" text-anchor="end" fill="#1d2125">${count}</text>${
      moves && html`<text x="${LEFT + 10}" y="${row(r) + 55}" font-size="11" fill="#1d2125">${moves}</text>`
    }</g>`;
  const entered = counts.active + counts.completed + counts.exited;
  const boxes = [
    box(
      0,
      `on ${definition.trigger.event}`,
      `re-entry: ${definition.reentry}`,
      `entered ${entered}`,
      '#e3ecfd',
    ),
    ...steps.map((s, i) => {
      const waiting = counts.atStep[s.id] ?? 0;
      const step = statsOf.get(s.id);
      return box(
        i + 1,
        s.id,
        stepSummary(s),
        `waiting ${waiting}`,
        waiting > 0 ? '#fff1d6' : '#ffffff',
        step
          ? html`data-step="${s.id}" data-waiting="${waiting}" data-entered="${step.entered}" data-passed="${step.passed}" data-exited="${step.exited}"`
          : html`data-step="${s.id}" data-waiting="${waiting}"`,
        step ? `entered ${step.entered} · passed ${step.passed} · exited ${step.exited}` : '',
      );
    }),
    box(
      steps.length + 1,
      'end',
      definition.exitOn.length > 0 ? `exits on ${definition.exitOn.join(', ')}` : 'no exit events',
      `done ${counts.completed} · exited ${counts.exited}`,
      '#dcf3e5',
      html`data-step="end" data-done="${counts.completed}" data-exited="${counts.exited}"`,
    ),
  ];
  const width = LEFT + BOX_W + LANE * (jumps.length + 1) + 70;
  const height = row(steps.length + 2) - GAP + TOP;
  return html`<figure class="workflow-diagram"><svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 ${width} ${height}" width="${width}" height="${height}" role="img" aria-label="The workflow's steps with the runs at each"><defs><marker id="wf-arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" orient="auto-start-reverse"><path d="M0 0 L10 5 L0 10 z" fill="#5f6b76"/></marker><marker id="wf-arrow-b" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" orient="auto-start-reverse"><path d="M0 0 L10 5 L0 10 z" fill="#2456c8"/></marker></defs>${arrows}${boxes}</svg></figure>`;
}

function clip(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}
