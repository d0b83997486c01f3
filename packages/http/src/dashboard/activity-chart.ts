/**
 * The activity charts, drawn on the server as inline SVG: no script, no library, no request to anyone,
 * and nothing the page's Content-Security-Policy has to allow (presentation attributes, not styles).
 * Panels share the time axis, each with its own scale, so that a handful of bounces is not flattened
 * under a hundred thousand sends: sending, problems, engagement, and the reputation guard's rules; the
 * pauses of the period are shaded on every one. Every line carries its counts in `data-values`, aligned
 * with the chart's `data-buckets`.
 */
import type { ActivityChart, ActivitySeriesName } from '@mailroom/core';
import { html, type SafeHtml } from '../pages/html.js';
import { guardPanel, type PanelFrame, pauseBandsSvg, pausesAndWarmup } from './activity-chart-marks.js';

interface Panel {
  title: string;
  series: ReadonlyArray<{ name: ActivitySeriesName; label: string; color: string; dashed?: boolean }>;
}

const PANELS: readonly Panel[] = [
  {
    title: 'Sending',
    series: [
      { name: 'sent', label: 'sent', color: '#2563eb' },
      { name: 'deferred', label: 'deferred', color: '#d97706' },
      { name: 'failed', label: 'failed', color: '#7f1d1d' },
    ],
  },
  {
    title: 'Problems',
    series: [
      { name: 'bounced.recipient-hard', label: 'hard bounces', color: '#dc2626' },
      { name: 'bounced.soft', label: 'soft bounces', color: '#f97316' },
      { name: 'bounced.sender-side', label: 'refused (sender side)', color: '#9333ea' },
      { name: 'complained', label: 'complaints', color: '#be185d' },
      { name: 'suppressed', label: 'suppressed', color: '#6b7280' },
    ],
  },
  {
    title: 'Engagement',
    series: [
      { name: 'opened.human', label: 'opened', color: '#16a34a' },
      { name: 'opened.machine', label: 'opened by machines', color: '#16a34a', dashed: true },
      { name: 'clicked.human', label: 'clicked', color: '#0d9488' },
      { name: 'clicked.machine', label: 'clicked by machines', color: '#0d9488', dashed: true },
    ],
  },
];

const WIDTH = 720;
const HEIGHT = 140;
const LEFT = 48;
const RIGHT = 8;
const TOP = 8;
const BOTTOM = 20;

/** A round upper bound for the axis: 1, 2 or 5 times a power of ten. */
function niceMax(value: number): number {
  if (value <= 1) return 1;
  const power = 10 ** Math.floor(Math.log10(value));
  for (const step of [1, 2, 5, 10]) if (step * power >= value) return step * power;
  return 10 * power;
}

/** The time of a bucket as its axis label: the bucket width decides the precision (UTC). */
function label(at: number, bucketMs: number): string {
  const iso = new Date(at).toISOString();
  if (bucketMs < 3_600_000) return iso.slice(11, 16);
  if (bucketMs < 86_400_000) return `${iso.slice(5, 10)} ${iso.slice(11, 13)}h`;
  return iso.slice(0, 10);
}

/**
 * The x of bucket `i` of `n`: the plot is the period's time, each bucket its share of the width, and a
 * bucket's count is drawn at its middle (so that a pause inside a bucket is shaded around its point).
 */
const xOf = (n: number) => (i: number) => LEFT + ((i + 0.5) * (WIDTH - LEFT - RIGHT)) / Math.max(1, n);

/** The time axis of a chart: where an instant is drawn (clipped to the plot), and its label. */
function frameOf(chart: ActivityChart): PanelFrame {
  const x = xOf(chart.buckets.length);
  return {
    x,
    at: (time) =>
      Math.min(WIDTH - RIGHT, Math.max(LEFT, x((time - (chart.buckets[0] ?? 0)) / chart.bucketMs - 0.5))),
    top: TOP,
    bottom: HEIGHT - BOTTOM,
    label: (time) => label(time, chart.bucketMs),
  };
}

/** The axes of a panel: its scale's top and zero, and three times. */
function axisOf(chart: ActivityChart, max: number, unit = ''): SafeHtml {
  const n = chart.buckets.length;
  const x = xOf(n);
  const ticks = [0, Math.floor((n - 1) / 2), n - 1].filter((i, k, all) => i >= 0 && all.indexOf(i) === k);
  return html`<line x1="${LEFT}" x2="${WIDTH - RIGHT}" y1="${HEIGHT - BOTTOM}" y2="${HEIGHT - BOTTOM}" stroke="#9ca3af"/><text x="${LEFT - 4}" y="${TOP + 8}" text-anchor="end" font-size="10" fill="#6b7280">${max}${unit}</text><text x="${LEFT - 4}" y="${HEIGHT - BOTTOM}" text-anchor="end" font-size="10" fill="#6b7280">0</text>${ticks.map(
    (i) =>
      html`<text x="${x(i).toFixed(1)}" y="${HEIGHT - 6}" text-anchor="${i === 0 ? 'start' : i === n - 1 ? 'end' : 'middle'}" font-size="10" fill="#6b7280">${label(chart.buckets[i] ?? 0, chart.bucketMs)}</text>`,
  )}`;
}

/** One panel: the pauses, its lines, the markers, and the axes. */
function panel(chart: ActivityChart, spec: Panel): SafeHtml {
  const max = niceMax(Math.max(...spec.series.flatMap((s) => chart.series[s.name])));
  const x = xOf(chart.buckets.length);
  const frame = frameOf(chart);
  const y = (v: number) => TOP + (HEIGHT - TOP - BOTTOM) * (1 - v / max);
  const points = (values: readonly number[]) =>
    values.map((v, i) => `${x(i).toFixed(1)},${y(v).toFixed(1)}`).join(' ');
  // A marker counts events of its bucket: drawn at the bucket's middle, with its point.
  const at = (bucket: number) => x((bucket - (chart.buckets[0] ?? 0)) / chart.bucketMs);
  // Dots on the buckets that have something, so that a lone spike shows on a wide axis.
  const dots = (s: Panel['series'][number]) =>
    chart.series[s.name].map((v, i) =>
      v > 0
        ? html`<circle cx="${x(i).toFixed(1)}" cy="${y(v).toFixed(1)}" r="2.5" fill="${s.color}"><title>${s.label}: ${v} at ${label(chart.buckets[i] ?? 0, chart.bucketMs)}</title></circle>`
        : '',
    );
  const lines = spec.series.map(
    (s) =>
      html`${dots(s)}<polyline data-series="${s.name}" data-values="${chart.series[s.name].join(',')}" points="${points(chart.series[s.name])}" fill="none" stroke="${s.color}" stroke-width="1.5"${s.dashed ? html` stroke-dasharray="4 3"` : ''}><title>${s.label}</title></polyline>`,
  );
  const marks = chart.markers.map(
    (m) =>
      html`<line data-marker="${m.type}" data-at="${new Date(m.at).toISOString()}" x1="${at(m.at).toFixed(1)}" x2="${at(m.at).toFixed(1)}" y1="${TOP}" y2="${HEIGHT - BOTTOM}" stroke="${(m.type as string) === 'broadcast.paused' ? '#dc2626' : '#6b7280'}" stroke-dasharray="3 3"><title>${m.type.replace('broadcast.', '')} at ${label(m.at, chart.bucketMs)}</title></line>`,
  );
  const axis = axisOf(chart, max);
  const legend = html`<ul class="plain legend">${spec.series.map(
    (s) =>
      html`<li><svg width="14" height="8" aria-hidden="true"><line x1="0" x2="14" y1="4" y2="4" stroke="${s.color}" stroke-width="2"${s.dashed ? html` stroke-dasharray="3 2"` : ''}/></svg> ${s.label} <b>${chart.series[s.name].reduce((a, b) => a + b, 0)}</b></li>`,
  )}</ul>`;
  return html`<figure class="chart" data-panel="${spec.title.toLowerCase()}"><figcaption>${spec.title}</figcaption><svg viewBox="0 0 ${WIDTH} ${HEIGHT}" role="img" aria-label="${spec.title} over time" width="100%" preserveAspectRatio="none">${pauseBandsSvg(chart, frame)}${axis}${lines}${marks}</svg>${legend}</figure>`;
}

/**
 * The activity section: the panels over the chart's buckets (the guard's when it is on), the period's
 * pauses and today's warm-up; or a line saying there is nothing yet. `controls` go under the heading (a
 * destination selector).
 */
export function activitySection(
  chart: ActivityChart,
  options: { title?: string; controls?: SafeHtml } = {},
): SafeHtml {
  const total = Object.values(chart.series).reduce(
    (sum, values) => sum + values.reduce((a, b) => a + b, 0),
    0,
  );
  const width = chart.bucketMs < 3_600_000 ? 'minute' : chart.bucketMs < 86_400_000 ? 'hour' : 'day';
  const heading = html`<h2>${options.title ?? 'Activity'}</h2>${options.controls ?? ''}`;
  const frame = frameOf(chart);
  if (total === 0 && chart.markers.length === 0 && chart.pauses.length === 0) {
    return html`${heading}<p class="card muted" data-activity-empty>No activity in this period yet.</p>`;
  }
  const destination = chart.destination
    ? html` To ${chart.destination.name}${chart.destination.domains.join(', ') === chart.destination.name ? '' : ` (${chart.destination.domains.join(', ')})`}.`
    : '';
  return html`${heading}<div class="card activity" data-activity data-bucket-ms="${chart.bucketMs}" data-buckets="${chart.buckets.join(',')}" data-destination="${chart.destination?.name ?? ''}"><p class="muted">Per ${width}, ${label(chart.buckets[0] ?? 0, chart.bucketMs)} to ${label(chart.to.getTime(), chart.bucketMs)} UTC.${destination}${chart.pauses.length > 0 ? ' Shaded: paused (red a broadcast, yellow all sending, violet a destination).' : ''}</p>${PANELS.map(
    (p) => panel(chart, p),
  )}${guardPanel(chart, { width: WIDTH, height: HEIGHT, left: LEFT, right: RIGHT, top: TOP, bottom: BOTTOM }, frame, (max) => axisOf(chart, max, ' %'))}${pausesAndWarmup(chart, frame)}</div>`;
}
