/** The series the activity charts draw (shared by the chart's query and the guard's lines). */

/** The series of a chart, in the order a legend lists them. */
export const ACTIVITY_SERIES = [
  'sent',
  'deferred',
  'failed',
  'bounced.recipient-hard',
  'bounced.soft',
  'bounced.sender-side',
  'complained',
  'suppressed',
  'opened.human',
  'opened.machine',
  'clicked.human',
  'clicked.machine',
] as const;

/** One series of a chart: what its points count. */
export type ActivitySeriesName = (typeof ACTIVITY_SERIES)[number];
