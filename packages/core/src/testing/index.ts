/** Token signing, for tests of the tracking routes that need a validly signed but wrong token. */

/** Confirmation tokens, for tests of forged, altered and foreign links. */
export { parseSignupToken, signSignupToken } from '../signup/signup-token.js';
export { signClickToken, signOpenToken } from '../tracking/tracking-token.js';
export { seedProfiles } from './store-suite-helpers.js';
export * from './store-test-suite.js';
export * from './transport-test-suite.js';
