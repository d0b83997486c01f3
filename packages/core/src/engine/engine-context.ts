import type { DestinationOptions } from '../delivery/destinations.js';
import type { DomainSigning } from '../domains/domain-signing.js';
import type { ReturnPaths } from '../inbound/return-path.js';
import type { Tracking } from '../tracking/tracking.js';
import type { UnsubscribeLinks } from '../unsubscribe/unsubscribe-links.js';
import type { BaseContext } from './base-context.js';

export type { AttachmentLimits, BaseContext } from './base-context.js';

/**
 * The engine's context: the base, plus the optional capabilities its options turned on. Only the parts that
 * use a capability take this one; a capability itself takes a `BaseContext`, so none reaches another through
 * the context. Internal.
 */
export interface EngineContext extends BaseContext {
  /** The project's sending domains as sending reads them: signing keys, the sending policy. */
  domains: DomainSigning;
  /** Open and click tracking, when the engine has the `tracking` option. */
  tracking?: Tracking;
  /** VERP return paths, when the engine has the `bounces` option. */
  bounces?: ReturnPaths;
  /** Destinations and their shared limits, when the engine has the `destinations` option. */
  destinations?: DestinationOptions;
  /** One-click unsubscribe links, when the engine has the `unsubscribe` option. */
  unsubscribe?: UnsubscribeLinks;
}
