import type { Page } from '../store/paging.js';

/** Page size of the management listings when none is asked. */
export const DEFAULT_PAGE_LIMIT = 50;
/** The largest page of the management listings. */
export const MAX_PAGE_LIMIT = 200;

/** A page size within 1 and {@link MAX_PAGE_LIMIT}, or the default. */
export function clampPageLimit(limit: number | undefined): number {
  if (limit === undefined || !Number.isFinite(limit)) return DEFAULT_PAGE_LIMIT;
  return Math.max(1, Math.min(MAX_PAGE_LIMIT, Math.floor(limit)));
}

/**
 * A page from rows read with `limit + 1`: the extra row only says that there is a next page, whose
 * cursor is the last item's key.
 */
export function pageOf<T>(rows: T[], limit: number, keyOf: (row: T) => string): Page<T> {
  const items = rows.slice(0, limit);
  const last = items.at(-1);
  return { items, next: rows.length > limit && last !== undefined ? keyOf(last) : null };
}
