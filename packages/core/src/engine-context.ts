import type { EventHub } from './events.js';
import type { GuardedFetcher } from './fetch/fetch-types.js';
import type { ReturnPaths } from './inbound/return-path.js';
import type { Clock, Logger, MailroomLimits } from './mailroom-types.js';
import type { EventOutbox } from './outbox/event-outbox.js';
import type { Store } from './store.js';
import type { Tracking } from './tracking.js';
import type { Transport } from './transport.js';
import type { UnsubscribeLinks } from './unsubscribe-links.js';

/** Limits on attachments, in addition to the request limits. */
export interface AttachmentLimits {
  /** @default 10 */
  maxCount: number;
  /** Total decoded bytes of one request's attachments. @default 25 MiB */
  maxTotalBytes: number;
}

/** What every part of the engine shares. Internal. */
export interface EngineContext {
  store: Store;
  transport: Transport;
  clock: Clock;
  logger: Logger;
  events: EventHub;
  /** Builds the events (and webhook messages) written with each change (architecture flow 5). */
  outbox: EventOutbox;
  limits: MailroomLimits & { attachments: AttachmentLimits };
  strictVariables: boolean;
  storeContentDefault: boolean;
  /** The only way the engine fetches a URL: attachments by URL, CSV sources. */
  fetcher: GuardedFetcher;
  /** Open and click tracking, when the engine has the `tracking` option. */
  tracking?: Tracking;
  /** VERP return paths, when the engine has the `bounces` option. */
  bounces?: ReturnPaths;
  /** One-click unsubscribe links, when the engine has the `unsubscribe` option. */
  unsubscribe?: UnsubscribeLinks;
  /** Resolves once the store is initialized (migrations run); every entry point awaits it. */
  ready: () => Promise<void>;
}
