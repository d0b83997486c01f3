export type { TextEncoding } from './compose-message.js';
export { DEFAULT_TEXT_ENCODING } from './compose-message.js';
export type { DkimKey } from './dkim-signer.js';
export { DKIM_SIGNED_HEADERS } from './dkim-signer.js';
export type { OutboxTransportOptions } from './outbox-transport.js';
export { outboxTransport } from './outbox-transport.js';
export { toTransportError } from './smtp-error.js';
export type { SmtpTransporterSettings, SmtpTransportOptions } from './smtp-transport.js';
export { smtpTransport } from './smtp-transport.js';
