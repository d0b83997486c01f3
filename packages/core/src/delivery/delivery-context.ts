import type { DomainSigning } from '../domains/domain-signing.js';
import type { WarmupOptions } from '../domains/warmup-schedule.js';
import type { InboundContext } from '../inbound/inbound-context.js';
import type { Tracking } from '../tracking/tracking.js';
import type { UnsubscribeContext } from '../unsubscribe/unsubscribe-context.js';
import type { DestinationOptions } from './destinations.js';

/**
 * What the delivery loop takes: the base, plus the capabilities it uses when the engine's options turned
 * them on (the sideways imports `.dependency-cruiser.cjs` declares for `delivery/`). The engine builds one
 * object that is also the inbound side's and unsubscribe's context. Internal.
 */
export interface DeliveryContext extends InboundContext, UnsubscribeContext {
  /** The project's sending domains as sending reads them: signing keys, the sending policy. */
  domains: DomainSigning;
  /** Open and click tracking, when the engine has the `tracking` option. */
  tracking?: Tracking;
  /** Destinations and their shared limits, when the engine has the `destinations` option. */
  destinations?: DestinationOptions;
  /** Sender domains' and routes' warm-up schedules, when the engine has the `warmup` option. */
  warmup?: WarmupOptions;
}
