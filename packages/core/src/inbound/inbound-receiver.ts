/**
 * `mailroom.inbound`: takes inbound mail and provider notifications, finds the delivery they are about
 * through something the engine can verify (a VERP token's MAC, a provider's signature checked by the
 * caller, an unguessable Message-ID for complaints), checks that the report agrees with that delivery, and
 * applies the signal (docs/architecture.md, invariant 11: nothing is trusted by its look). The roles:
 * `receive-message.ts` (a message), `find-delivery.ts` (verifying), `apply-report.ts` and
 * `provider-signal.ts` (the effects), `provider-notifications.ts` (notifications), `listener-answers.ts`
 * (the SMTP listener's questions), `inbound-receipts.ts` (receipts and their counting).
 */

import type { InboundContext } from './inbound-context.js';
import { countedReceipt } from './inbound-receipts.js';
import type { MailroomInbound, ProviderSignal } from './inbound-types.js';
import { acceptsRecipient, noteRefusal, recipientVerdict } from './listener-answers.js';
import { createNotifications, type NotificationOptions } from './provider-notifications.js';
import { applyCountedProviderSignal } from './provider-signal.js';
import { receiveMessage } from './receive-message.js';

export { MAX_INBOUND_BYTES } from './receive-message.js';

/** The engine's `inbound` member. */
export function createInbound(ctx: InboundContext, notifications: NotificationOptions = {}): MailroomInbound {
  const countedSignal = (signal: ProviderSignal) => applyCountedProviderSignal(ctx, signal);
  const notify = createNotifications(ctx, notifications, countedSignal);

  return {
    enabled: ctx.bounces !== undefined,
    domain: ctx.bounces?.domain,

    acceptsRecipient: (address) => acceptsRecipient(ctx, address),

    recipientVerdict: (address) => recipientVerdict(ctx, address),

    async receive(raw, envelope) {
      return countedReceipt(ctx, 'smtp', await receiveMessage(ctx, { raw, envelope }));
    },

    applyProviderSignal: countedSignal,

    async notification(provider, body) {
      await ctx.ready();
      // Each signal of a notification is counted as it is applied; one that holds none is counted here.
      const result = await notify(provider, body);
      if (result.outcome === 'ignored' && result.code === undefined) {
        return countedReceipt(ctx, provider, { ...result, code: 'not-a-bounce' });
      }
      return result;
    },

    refused: (code, envelope) => noteRefusal(ctx, code, envelope),
  };
}
