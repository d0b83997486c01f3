import type { Logger } from './mailroom-types.js';

/** A logger that drops everything (the default: an embedded engine stays quiet). */
export const silentLogger: Logger = {
  debug: () => {},
  info: () => {},
  warn: () => {},
  error: () => {},
};
