import { z } from 'zod';
import type { MailingTrackOptions } from '../store/records.js';

/**
 * `options.track`: our extension of the spec's options. Tracking is the engine's (`tracking` option, off by
 * default); a mailing can only turn off what the engine tracks, or opt its text part's links in.
 */
export const trackSchema = z
  .object({
    opens: z.boolean().nullish().meta({ description: 'false: no open pixel in this mailing.' }),
    clicks: z.boolean().nullish().meta({ description: 'false: links of this mailing are not rewritten.' }),
    textLinks: z.boolean().nullish().meta({
      description: 'true: the derived text part carries the tracked links too (default: the original ones).',
    }),
  })
  .strict()
  .meta({ description: 'Mailroom extension: open and click tracking of this mailing.' });

/** `{ track }` normalized, or nothing when the request says nothing (the spec's shape stays as it was). */
export function trackOptionsOf(track: z.output<typeof trackSchema> | null | undefined): {
  track?: MailingTrackOptions;
} {
  if (!track) return {};
  const out: MailingTrackOptions = {};
  if (typeof track.opens === 'boolean') out.opens = track.opens;
  if (typeof track.clicks === 'boolean') out.clicks = track.clicks;
  if (typeof track.textLinks === 'boolean') out.textLinks = track.textLinks;
  return Object.keys(out).length > 0 ? { track: out } : {};
}
