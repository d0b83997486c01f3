import type { ProgressEvents } from '../admin/admin-events.js';
import type { AutomationEvents } from '../automations/automation-events.js';
import type { ConsentEvents } from '../consent/consent-events.js';
import type { DeliveryEvents } from '../delivery/delivery-events.js';
import type { InboundEvents } from '../inbound/inbound-events.js';
import type { ReceivingEvents } from '../receiving/receiving-events.js';
import type { SignupEvents } from '../signup/signup-events.js';
import type { TrackingEvents } from '../tracking/tracking-events.js';
import type { UnsubscribeEvents } from '../unsubscribe/unsubscribe-events.js';
import type { WebhookEvents } from '../webhooks/webhook-events.js';

/**
 * Events the engine emits (`mailroom.on`): the union of what each capability declares in its own folder.
 * A new capability adds its events interface here.
 */
export interface MailroomEvents
  extends DeliveryEvents,
    ProgressEvents,
    WebhookEvents,
    TrackingEvents,
    UnsubscribeEvents,
    InboundEvents,
    ConsentEvents,
    AutomationEvents,
    SignupEvents,
    ReceivingEvents {}
