import { transportTestSuite } from '@mailroom/core/testing';
import { memoryTransport } from '../src/index.js';
import { outboxReceived } from './outbox-received.js';

transportTestSuite('memory', () => {
  const transport = memoryTransport();
  return { transport, received: async () => outboxReceived(transport.outbox), close: async () => {} };
});
