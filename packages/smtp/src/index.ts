export type { TextEncoding } from './compose-message.js';
export { DEFAULT_TEXT_ENCODING } from './compose-message.js';
export type { DkimKey } from './dkim-signer.js';
export { DKIM_SIGNED_HEADERS } from './dkim-signer.js';
export type { OutboxTransport, OutboxTransportOptions } from './outbox-transport.js';
export { outboxTransport } from './outbox-transport.js';
export { toTransportError } from './smtp-error.js';
export type { SmtpTransport, SmtpTransporterSettings, SmtpTransportOptions } from './smtp-transport.js';
export { smtpTransport } from './smtp-transport.js';
