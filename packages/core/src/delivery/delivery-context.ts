import type { DomainSigning } from '../domains/domain-signing.js';
import type { WarmupOptions } from '../domains/warmup-schedule.js';
import type { InboundContext } from '../inbound/inbound-context.js';
import type { RenderBudget } from '../render/render-budget.js';
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
  /**
   * The engine's render budget (option `renderBudget`), shared by previews and sends: a project's renders
   * that run long are charged to it, and over it its deliveries wait. Absent: the worker keeps its own.
   */
  renderBudget?: { budget: RenderBudget; msPerMinute: number };
  /** The pauses this process knows of now (the reputation guard's watch), when the guard runs. */
  heldBack?: HeldBack;
}

/**
 * What pauses hold back, as this process knows it between two claims: a pause the guard just wrote here,
 * or one it read from the store since (every ~250 ms while outcomes flow). A claimed delivery it covers is
 * handed back unsent (due now; claims pass over it while the pause lasts), so a batch claimed before the
 * pause does not send on into the wall.
 */
export interface HeldBack {
  /** True when a pause covers the delivery: its broadcast, its project, or its destination domain. O(1). */
  held(projectId: string, mailingId: string, address: string): boolean;
}
