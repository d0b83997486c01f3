// The MIME composer lives in @mailroom/core (the SES transport shares it); re-exported here as before.
export type { DkimKey, TextEncoding } from '@mailroom/core';
export { createComposer, DEFAULT_TEXT_ENCODING, DKIM_SIGNED_HEADERS, rawComposer } from '@mailroom/core';
export type { InboundServer, InboundServerOptions } from './inbound-server.js';
export { inboundSmtpServer } from './inbound-server.js';
export type { OutboxTransport, OutboxTransportOptions } from './outbox-transport.js';
export { outboxTransport } from './outbox-transport.js';
export { toTransportError } from './smtp-error.js';
export type { SmtpTransport, SmtpTransporterSettings, SmtpTransportOptions } from './smtp-transport.js';
export { smtpTransport } from './smtp-transport.js';
