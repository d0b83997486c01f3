import type { Logger } from './base-types.js';

/** A logger that drops everything (the default: an embedded engine stays quiet). */
export const silentLogger: Logger = {
  debug: () => {},
  info: () => {},
  warn: () => {},
  error: () => {},
};
