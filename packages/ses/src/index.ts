export { toSesError } from './ses-error.js';
export type { SesTransport, SesTransportOptions } from './ses-transport.js';
export { sesTransport } from './ses-transport.js';
