import { transportTestSuite } from '@mailroom/core/testing';
import { smtpTransport } from '@mailroom/smtp';
import { startSmtpSink } from '../../../test/support/smtp-sink.js';

transportTestSuite('smtp', async () => {
  const sink = await startSmtpSink();
  const transport = smtpTransport({ host: sink.host, port: sink.port });
  return {
    transport,
    received: () => sink.received(),
    close: () => transport.close().then(() => sink.close()),
  };
});
