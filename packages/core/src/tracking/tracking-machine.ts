/**
 * Who made a tracking hit: a person, or a machine acting before or instead of one. The verdicts are
 * heuristics, documented in docs/tracking.md; a hit judged a machine's is still recorded, apart.
 */
import type { TrackingHitMeta } from './tracking-options.js';

/**
 * Mail-privacy proxies that fetch images whether or not anyone reads the message (Apple Mail Privacy
 * Protection prefetches every image; Yahoo's proxy too), or in place of the reader's client (Gmail's image
 * proxy fetches once, when the message is first opened, then serves its copy: a person is usually behind
 * it, but nothing tells who or when again, so it is counted apart as well).
 */
const PROXY_AGENTS = [/GoogleImageProxy/i, /YahooMailProxy/i, /ggpht\.com/i];

/** Link checkers of mail security gateways and generic HTTP clients: no person clicks through them. */
const SCANNER_AGENTS =
  /bot\b|crawl|spider|scanner|slurp|preview|python-|curl\/|wget\/|go-http-client|java\/|okhttp|libwww|httpclient|axios\/|node-fetch|undici|barracuda|mimecast|proofpoint|urldefense|safelinks|trendmicro|symantec|forcepoint|cisco|fortiguard|sophos/i;

/** Whether an open came from a mail-privacy proxy (or a client that says nothing about itself, or a `HEAD`). */
export function isMachineOpen(meta: TrackingHitMeta): boolean {
  const agent = meta.userAgent?.trim() ?? '';
  if (agent === '' || meta.method === 'HEAD') return true;
  // Apple Mail Privacy Protection fetches with this bare agent, from Apple's own network (17.0.0.0/8).
  if (agent === 'Mozilla/5.0') return true;
  if (meta.ip !== undefined && isAppleNetwork(meta.ip)) return true;
  return PROXY_AGENTS.some((re) => re.test(agent));
}

/** Whether a click came from a link scanner, by what the request says (see the burst rule too). */
export function isMachineClick(meta: TrackingHitMeta): boolean {
  const agent = meta.userAgent?.trim() ?? '';
  if (agent === '' || meta.method === 'HEAD') return true;
  return SCANNER_AGENTS.test(agent);
}

function isAppleNetwork(ip: string): boolean {
  const v4 = ip.startsWith('::ffff:') ? ip.slice(7) : ip;
  return /^17\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(v4);
}
