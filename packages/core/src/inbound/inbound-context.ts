import type { BaseContext } from '../context/base-context.js';
import type { ReturnPaths } from './return-path.js';

/** What the inbound side takes: the base, and the VERP return paths when the engine has `bounces`. Internal. */
export interface InboundContext extends BaseContext {
  /** VERP return paths, when the engine has the `bounces` option. */
  bounces?: ReturnPaths;
}
