import type { ReceivingRouteRecord } from '../store/receiving-store.js';

/** A route pattern: a local part, a prefix ending in `*`, or `*` alone. */
export const ROUTE_PATTERN = /^(\*|[A-Za-z0-9!#$%&'+\-/=?^_`{|}~.]{1,64}\*?)$/;

/** An address split at its last `@`, the domain lower-cased; undefined when it has no local part or domain. */
export function splitAddress(address: string): { local: string; domain: string } | undefined {
  const at = address.lastIndexOf('@');
  if (at <= 0 || at === address.length - 1) return undefined;
  return { local: address.slice(0, at), domain: address.slice(at + 1).toLowerCase() };
}

/**
 * The route of `domain`'s routes that takes `local`: an exact pattern first, then the longest prefix with a
 * wildcard (`reply+*`), then the catch-all `*`. Local parts compare without case (`Support@` is `support@`),
 * as almost every receiving server does.
 */
export function matchRoute(
  routes: readonly ReceivingRouteRecord[],
  local: string,
): ReceivingRouteRecord | undefined {
  const wanted = local.toLowerCase();
  let best: ReceivingRouteRecord | undefined;
  let bestRank = -1;
  for (const route of routes) {
    const pattern = route.pattern.toLowerCase();
    let rank = -1;
    if (pattern === '*') rank = 0;
    else if (pattern.endsWith('*')) {
      if (wanted.startsWith(pattern.slice(0, -1))) rank = pattern.length;
    } else if (pattern === wanted) rank = Number.MAX_SAFE_INTEGER;
    if (rank > bestRank) {
      best = route;
      bestRank = rank;
    }
  }
  return best;
}
