import { type Capability, storeRole } from '../context/capability.js';
import type { ReceivingStore } from '../store/receiving-store.js';
import { receivedParser } from './received-parser.js';
import { createReceivingApi } from './receiving-api.js';
import type { ReceivingEngineOptions } from './receiving-options.js';
import type { ReceivingFacade } from './receiving-types.js';

/**
 * Receiving mail for the app (issue 40), plugged in through the capability seam: the store's
 * `ReceivingStore` role, `mailroom.receiving`, the `emailReceived` event. The SMTP listener
 * (`@mailroom/smtp`) asks it which recipients a route takes and hands it their messages; the bounce
 * domain stays with `inbound/`.
 */
export const receivingCapability: Capability<ReceivingEngineOptions, ReceivingFacade, object> = {
  name: 'receiving',
  storeRole: storeRole<ReceivingStore>()(
    'createReceivingRoute',
    'listReceivingRoutes',
    'findReceivingRoutes',
    'deleteReceivingRoute',
    'saveReceivedMessage',
    'getReceivedMessage',
    'listReceivedMessages',
    'readReceivedRaw',
    'pruneReceivedMessages',
    'getReceivingSettings',
    'putReceivingSettings',
  ),
  create({ ctx, resolveAuth }, options) {
    const receiving = options.receiving ?? {};
    // Parse threads start with the first received message: an engine that receives none starts none.
    const parser = receivedParser(receiving, ctx.logger);
    return {
      facade: { receiving: createReceivingApi(ctx, resolveAuth, receiving, parser) },
      provides: {},
      close: parser.close,
    };
  },
};
