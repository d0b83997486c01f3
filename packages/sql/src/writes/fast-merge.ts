import { PROFILE_TRAITS_CAP } from '@mailroom/core';

/**
 * The largest stored-plus-incoming traits, in characters of their JSON texts, that the SQL stores merge
 * in SQL (SQLite's `json_patch`, PostgreSQL's jsonb `||`) without measuring them against the traits cap
 * (`PROFILE_TRAITS_CAP`, applied by `mergeProfile`). A merge holds no more than both texts, so within
 * this it cannot pass the cap: every key (at any depth) takes at least 4 characters of JSON (`"":0`), so
 * 4,000 characters hold at most 1,000 keys; and a character counts at most 5 bytes in the cap's measure
 * (at most 4 of UTF-8, plus the one the measure adds to each `true`, object and array). A
 * profile past it is merged in TypeScript, by the rule and its cap. Most profiles of a CSV import (a few
 * short columns) stay well within it.
 */
export const FAST_MERGE_MAX_CHARS = Math.min(
  4 * PROFILE_TRAITS_CAP.keys,
  Math.floor(PROFILE_TRAITS_CAP.bytes / 5),
);
