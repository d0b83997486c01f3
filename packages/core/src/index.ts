export * from './errors.js';
export type * from './mailroom-types.js';
export * from './records.js';
export type * from './request-types.js';
export type * from './store.js';
export type * from './transport.js';
