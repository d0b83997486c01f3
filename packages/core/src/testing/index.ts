export * from './store-test-suite.js';
export * from './transport-test-suite.js';
