/**
 * What the activity charts draw besides their lines: the pauses as bands on the time axis (every panel),
 * the reputation guard's panel (how near each rule is to pausing, with the limit as a rule at 100 %), and
 * the list of the period's pauses and today's warm-up in words.
 */
import type { ActivityChart, GuardLine, PauseBand } from '@mailroom/core';
import { html, type SafeHtml } from '../pages/html.js';

/** The geometry of a panel, shared with `activity-chart.ts`. */
export interface PanelFrame {
  /** x of bucket `i`'s point (its middle). */
  x(i: number): number;
  /** x of a time (epoch ms), clipped to the plot. */
  at(time: number): number;
  top: number;
  bottom: number;
  /** The time label of an instant at the chart's precision. */
  label(time: number): string;
}

const BAND_FILL: Record<PauseBand['scope'], string> = {
  broadcast: '#fca5a5',
  project: '#fcd34d',
  destination: '#c4b5fd',
};

/** What a pause was, in words: "broadcast brd_x paused by the guard (broadcast.complaints)". */
export function pauseWords(band: PauseBand): string {
  const what = band.scope === 'project' ? 'all sending' : `${band.scope} ${band.target}`;
  const by =
    band.by === null ? 'before this period' : band.by === 'guard' ? 'by the guard' : 'by an operator';
  const rule = band.rule
    ? ` (${band.rule.name}: ${band.rule.count} of ${band.rule.attempts}, above ${pct(band.rule.threshold)})`
    : '';
  const reason = band.reason && !band.rule ? ` (${band.reason})` : '';
  return `${what} paused ${by}${rule}${reason}`;
}

function endWords(band: PauseBand, frame: PanelFrame): string {
  if (band.to === null) return 'still paused';
  const how =
    band.ended === 'timed' ? 'ended by itself' : band.ended === 'guard' ? 'resumed by the guard' : 'resumed';
  return `${how} at ${frame.label(band.to.getTime())}`;
}

/** A share as a percentage, with the precision small thresholds need. */
export function pct(ratio: number): string {
  const value = ratio * 100;
  return `${value >= 1 ? Number(value.toFixed(1)) : Number(value.toPrecision(2))} %`;
}

/** The pauses as shaded bands over a panel, behind its lines. */
export function pauseBandsSvg(chart: ActivityChart, frame: PanelFrame): SafeHtml[] {
  return chart.pauses.map((band) => {
    const x1 = frame.at(band.from.getTime());
    const x2 = frame.at((band.to ?? chart.to).getTime());
    // A pause of seconds on an axis of hours still shows.
    const width = Math.max(2, x2 - x1);
    return html`<rect data-pause="${band.scope}" data-target="${band.target}" data-by="${band.by ?? ''}" data-rule="${band.rule?.name ?? ''}" data-from="${band.from.toISOString()}" data-to="${band.to?.toISOString() ?? ''}" data-started-before="${band.startedBefore ? 'true' : 'false'}" x="${x1.toFixed(1)}" y="${frame.top}" width="${width.toFixed(1)}" height="${frame.bottom - frame.top}" fill="${BAND_FILL[band.scope]}" fill-opacity="0.45"><title>${pauseWords(band)}, ${frame.label(band.from.getTime())}; ${endWords(band, frame)}</title></rect>`;
  });
}

const GUARD_LABEL: Record<string, { words: string; color: string }> = {
  'broadcast.hard-bounces': { words: 'hard bounces', color: '#dc2626' },
  'broadcast.complaints': { words: 'complaints', color: '#be185d' },
  'broadcast.sender-side': { words: 'refused (sender side)', color: '#9333ea' },
  'destination.sender-side': { words: 'refused (sender side)', color: '#9333ea' },
};

/** The rule of a guard line in words: "pauses above 5 % once 500 attempted". */
function ruleWords(line: GuardLine): string {
  const minimum =
    line.minimumOf === 'attempts' ? `once ${line.minimum} attempted` : `and at least ${line.minimum}`;
  const minutes = (ms: number) =>
    ms % 3_600_000 === 0 ? `${ms / 3_600_000} h` : `${Math.round(ms / 60_000)} min`;
  const basis =
    line.basis === 'life'
      ? 'over the broadcast (since its last resume)'
      : line.windowMs !== null && line.basis > line.windowMs
        ? `counted here per ${minutes(line.basis)} (the guard counts ${minutes(line.windowMs)})`
        : `per ${minutes(line.basis)}, rolling`;
  return `pauses above ${pct(line.threshold)} ${minimum}, ${basis}`;
}

/**
 * The guard's panel: each rule's level, `min(rate / threshold, figure / minimum)` in percent, on one axis
 * whose 100 % line is where the guard pauses. Each line carries its figures in `data-counts` and
 * `data-attempts` (at each bucket's end), and its levels in `data-values`.
 */
export function guardPanel(
  chart: ActivityChart,
  geometry: { width: number; height: number; left: number; right: number; top: number; bottom: number },
  frame: PanelFrame,
  axisLabels: (max: number) => SafeHtml,
): SafeHtml {
  if (chart.guard.length === 0) return html``;
  const { width, height, left, right, top, bottom } = geometry;
  const x = frame.x;
  const levels = chart.guard.map((line) => line.levels.map((v) => Math.round(v * 1000) / 10));
  const peak = Math.max(100, ...levels.flat());
  const max = peak <= 150 ? 150 : peak <= 200 ? 200 : peak <= 500 ? 500 : Math.ceil(peak / 1000) * 1000;
  const y = (v: number) => top + (height - top - bottom) * (1 - Math.min(v, max) / max);
  const lines = chart.guard.map((line, k) => {
    const spec = GUARD_LABEL[line.rule] ?? { words: line.rule, color: '#374151' };
    const values = levels[k] ?? [];
    return html`<polyline data-guard="${line.rule}" data-values="${values.join(',')}" data-counts="${line.counts.join(',')}" data-attempts="${line.attempts.join(',')}" data-threshold="${line.threshold}" data-minimum="${line.minimum}" points="${values.map((v, i) => `${x(i).toFixed(1)},${y(v).toFixed(1)}`).join(' ')}" fill="none" stroke="${spec.color}" stroke-width="1.5"><title>${spec.words}: ${ruleWords(line)}</title></polyline>`;
  });
  const limit = html`<line data-guard-limit="100" x1="${left}" x2="${width - right}" y1="${y(100).toFixed(1)}" y2="${y(100).toFixed(1)}" stroke="#111827" stroke-dasharray="6 3"><title>the guard pauses above this line</title></line><text x="${width - right}" y="${(y(100) - 3).toFixed(1)}" text-anchor="end" font-size="10" fill="#111827">guard pauses above</text>`;
  const legend = html`<ul class="plain legend">${chart.guard.map((line) => {
    const spec = GUARD_LABEL[line.rule] ?? { words: line.rule, color: '#374151' };
    const count = line.counts.at(-1) ?? 0;
    const attempts = line.attempts.at(-1) ?? 0;
    return html`<li><svg width="14" height="8" aria-hidden="true"><line x1="0" x2="14" y1="4" y2="4" stroke="${spec.color}" stroke-width="2"/></svg> ${spec.words}: <b>${count}</b> of ${attempts} attempted${attempts > 0 ? ` (${pct(count / attempts)})` : ''}; ${ruleWords(line)}</li>`;
  })}<li class="muted">Each line is the smaller of rate ÷ threshold and count ÷ minimum (attempts: sent + failed, from the same events); at 100 % the rule is met, above it the guard pauses.${
    chart.guard[0]?.basis !== 'life' && !chart.destination
      ? ' The guard judges each destination apart: choose a destination to see its own.'
      : ''
  }</li></ul>`;
  return html`<figure class="chart" data-panel="guard"><figcaption>Reputation guard</figcaption><svg viewBox="0 0 ${width} ${height}" role="img" aria-label="The reputation guard's rules over time" width="100%" preserveAspectRatio="none">${pauseBandsSvg(chart, frame)}${axisLabels(max)}${limit}${lines}</svg>${legend}</figure>`;
}

/** The period's pauses and today's warm-up, in words. */
export function pausesAndWarmup(chart: ActivityChart, frame: PanelFrame): SafeHtml {
  const pauses =
    chart.pauses.length === 0
      ? html``
      : html`<h3>Pauses in this period</h3><ul class="plain" data-pause-list>${chart.pauses.map(
          (band) =>
            html`<li><svg width="10" height="10" aria-hidden="true"><rect width="10" height="10" fill="${BAND_FILL[band.scope]}"/></svg> ${frame.label(band.from.getTime())}: ${pauseWords(band)}; ${endWords(band, frame)}.</li>`,
        )}</ul>`;
  const warmup =
    chart.warmup.length === 0
      ? html``
      : html`<h3>Warm-up today</h3><ul class="plain">${chart.warmup.map(
          (w) =>
            html`<li data-warmup="${w.domain}" data-day="${w.day}" data-allowance="${w.allowance ?? ''}">${w.domain}: ${
              w.allowance === null
                ? 'warm-up over, no daily limit'
                : `day ${w.day}, ${w.allowance} messages allowed today (the next day's allowance from ${w.nextDayAt.toISOString().slice(0, 16).replace('T', ' ')} UTC)`
            }</li>`,
        )}</ul>`;
  return html`${pauses}${warmup}`;
}
