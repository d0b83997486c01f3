import { automationsCapability } from '../automations/automations-capability.js';
import { MailroomError } from '../base/errors.js';
import { consentCapability } from '../consent/consent-capability.js';
import type { Capability, CapabilityParts, CapabilitySetup, CapabilityTask } from '../context/capability.js';
import { domainsCapability } from '../domains/domains-capability.js';
import { receivingCapability } from '../receiving/receiving-capability.js';
import { trackingCapability } from '../tracking/tracking-capability.js';
import type { MailroomOptions } from './mailroom-types.js';

/**
 * The capabilities plugged in through the seam (`context/capability.ts`), in the order they are built;
 * they close in reverse. A new capability adds its definition here, its options interface to
 * `MailroomOptions`, its facade interface to `Mailroom` and its events to `MailroomEvents`.
 */
const CAPABILITIES = [
  domainsCapability,
  trackingCapability,
  consentCapability,
  automationsCapability,
  receivingCapability,
] as const;

type Plugged = (typeof CAPABILITIES)[number];
type PartsOf<C> = C extends Capability<infer _O, infer F, infer P> ? CapabilityParts<F, P> : never;
type Intersect<U> = (U extends unknown ? (x: U) => void : never) extends (x: infer I) => void ? I : never;

/** Every plugged capability, built: their facades and what they lend, merged; their tasks and closers. */
export interface PluggedCapabilities {
  /** Every capability's facade methods, for the engine's object. */
  facade: Intersect<PartsOf<Plugged>['facade']>;
  /** What they lend the delivery loop and the other parts, for the engine's context. */
  provides: Intersect<PartsOf<Plugged>['provides']>;
  /** Their background work, started and stopped with the worker. */
  tasks: CapabilityTask[];
  /** Close them, the last built first. */
  close(): Promise<void>;
}

/**
 * Builds every capability after checking its store role: a store that lacks a method a capability needs
 * is refused now (`VALIDATION_FAILED` naming it), not at the first call.
 */
export function plugCapabilities(setup: CapabilitySetup, options: MailroomOptions): PluggedCapabilities {
  const built: Array<CapabilityParts<object, object>> = [];
  for (const capability of CAPABILITIES) {
    const store = setup.ctx.store as unknown as Record<string, unknown>;
    const missing = capability.storeRole.filter((method) => typeof store[method] !== 'function');
    if (missing.length > 0) {
      throw new MailroomError(
        'VALIDATION_FAILED',
        `the store lacks ${missing.join(', ')}, which ${capability.name} needs (its store role)`,
      );
    }
    built.push((capability as Capability<MailroomOptions, object, object>).create(setup, options));
  }
  return {
    facade: Object.assign({}, ...built.map((parts) => parts.facade)),
    provides: Object.assign({}, ...built.map((parts) => parts.provides)),
    tasks: built.flatMap((parts) => (parts.task ? [parts.task] : [])),
    async close() {
      for (const parts of [...built].reverse()) await parts.close?.();
    },
  };
}
