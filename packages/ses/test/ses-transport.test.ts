import { transportTestSuite } from '@mailroom/core/testing';
import { sesTransport } from '@mailroom/ses';
import { SES_TEST_CREDENTIALS, startSesEmulator } from '../../../test/support/ses-emulator.js';

transportTestSuite('ses', async () => {
  const ses = await startSesEmulator();
  const transport = sesTransport({
    region: 'us-east-1',
    endpoint: ses.endpoint,
    credentials: SES_TEST_CREDENTIALS,
  });
  return {
    transport,
    received: () => ses.received(),
    close: () => transport.close().then(() => ses.close()),
  };
});
