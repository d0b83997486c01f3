export type {
  ConnectTarget,
  FetchResolver,
  GuardedFetcher,
  GuardedFetcherOptions,
  GuardedPostAnswer,
  GuardedRequest,
  GuardedResponse,
  ResolvedAddress,
} from './fetch-types.js';
export { parseAllowHost } from './guarded-connector.js';
export { createGuardedFetcher, FETCH_DEFAULTS } from './guarded-fetcher.js';
export { refusalOf } from './ip-policy.js';
export { FetchCapError, isByteCapError } from './read-body.js';
