import type { Clock, Logger, MailroomLimits } from '../base/base-types.js';
import type { EventOutbox } from '../events/event-outbox.js';
import type { GuardedFetcher } from '../fetch/fetch-types.js';
import type { Store } from '../store/store.js';
import type { Transport } from '../transport/transport.js';
import type { EventHub } from './event-hub.js';

/** Limits on attachments, in addition to the request limits. */
export interface AttachmentLimits {
  /** @default 10 */
  maxCount: number;
  /** Total decoded bytes of one request's attachments. @default 25 MiB */
  maxTotalBytes: number;
}

/**
 * What every part of the engine shares, without the optional capabilities: the context a capability takes,
 * so that no capability depends on another through it. Internal.
 */
export interface BaseContext {
  store: Store;
  transport: Transport;
  clock: Clock;
  logger: Logger;
  events: EventHub;
  /** Builds the events (and webhook messages) written with each change (docs/architecture.md, flow 5). */
  outbox: EventOutbox;
  limits: MailroomLimits & { attachments: AttachmentLimits };
  strictVariables: boolean;
  storeContentDefault: boolean;
  /** The only way the engine fetches a URL: attachments by URL, CSV sources. */
  fetcher: GuardedFetcher;
  /** Resolves once the store is initialized (migrations run); every entry point awaits it. */
  ready: () => Promise<void>;
}
