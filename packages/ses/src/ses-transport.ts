/**
 * The Amazon SES transport: SES API v2 `SendEmail` with raw content, the MIME built by the same composer
 * as the SMTP transport's.
 */
import {
  GetAccountCommand,
  SESv2Client,
  type SESv2ClientConfig,
  SendEmailCommand,
} from '@aws-sdk/client-sesv2';
import type { RawOutgoingMessage, SendReceipt, Transport } from '@mailroom/core';
import { DEFAULT_TEXT_ENCODING, type TextEncoding } from '@mailroom/core';
import { toSesError } from './ses-error.js';

const TRANSPORT_NAME = 'ses';

/** The transport {@link sesTransport} returns: `verify` and `close` are always there. */
export type SesTransport = Transport &
  Required<Pick<Transport, 'verify' | 'close'>> & {
    /**
     * The same function as `send`.
     * @deprecated `send` takes the bytes now (a transport's one job); removed in 1.0.
     */
    sendRaw: Transport['send'];
  };

/** Options of {@link sesTransport}. */
export interface SesTransportOptions {
  /** AWS region of the SES account, for example `eu-west-1`. */
  region: string;
  /**
   * Another endpoint than the region's, for example a local emulator (`http://127.0.0.1:8005`) or a
   * VPC endpoint.
   */
  endpoint?: string;
  /**
   * Access key and secret (and session token), or a provider of them.
   * @default the AWS SDK's default provider chain: environment, shared config and SSO, web identity,
   * container and instance metadata
   */
  credentials?: SESv2ClientConfig['credentials'];
  /**
   * The SES configuration set every message is sent with: how its bounce, complaint and delivery events
   * reach SNS (and from there Mailroom's inbound endpoint) and which IP pool sends it.
   */
  configurationSetName?: string;
  /**
   * Sign messages whose sender identity has a DKIM key in Mailroom (`message.dkim`) before they reach
   * SES. Identities without a key are left to SES (Easy DKIM), as are all of them when this is false.
   * @default true
   */
  dkim?: boolean;
  /**
   * Requests at once; SES accounts start at 14 messages per second.
   * @default 16
   */
  maxConcurrency?: number;
  /**
   * Transfer encoding of text parts, as in the SMTP transport.
   * @default 'base64'
   */
  textEncoding?: TextEncoding;
  /**
   * A client built by the caller (then `region`, `endpoint` and `credentials` are its own); closed by
   * `close()`. It should make one attempt per request (`maxAttempts: 1`): the worker owns retries.
   */
  client?: SESv2Client;
}

/**
 * Creates the SES transport on `@aws-sdk/client-sesv2`.
 *
 * Each message is composed by the core (the bytes the SMTP transport would send, DKIM-signed when the
 * sender has a key and `dkim` is on: the transport declares both in its capabilities) and sent with `SendEmail` as raw content to its
 * one recipient. The receipt's `providerMessageId` is SES's `MessageId`, the id its bounce and complaint
 * notifications name; its `response` reads `250 Ok <MessageId>`, as SES's SMTP interface answers.
 *
 * The SDK makes one attempt per send: the worker owns retries. Failures reject with `TRANSPORT_PERMANENT`
 * (`MessageRejected`, `MailFromDomainNotVerifiedException`) or `TRANSPORT_TRANSIENT`, asking the worker to
 * slow down when SES throttles (`TooManyRequestsException`) and to pause when the account's sending is
 * paused (`SendingPausedException`); see `toSesError`.
 *
 * @example
 * const transport = sesTransport({ region: 'eu-west-1', configurationSetName: 'mailroom' });
 */
export function sesTransport(options: SesTransportOptions): SesTransport {
  const textEncoding = options.textEncoding ?? DEFAULT_TEXT_ENCODING;
  const sign = options.dkim ?? true;
  const client = options.client ?? new SESv2Client(clientConfig(options));
  const maxConcurrency = options.maxConcurrency ?? 16;

  async function send(message: RawOutgoingMessage): Promise<SendReceipt> {
    let messageId: string | undefined;
    try {
      const answer = await client.send(
        new SendEmailCommand({
          // The From header names the sender; SES uses its own (or the custom MAIL FROM) return path, and
          // forwards bounce and complaint mail to the feedback address: the envelope sender, which is the
          // engine's VERP address with the `bounces` option (its domain must be verified in SES), else From.
          Destination: { ToAddresses: message.envelope.to },
          Content: { Raw: { Data: message.raw } },
          ...(message.envelope.from ? { FeedbackForwardingEmailAddress: message.envelope.from } : {}),
          ...(options.configurationSetName ? { ConfigurationSetName: options.configurationSetName } : {}),
        }),
      );
      messageId = answer.MessageId;
    } catch (error) {
      throw toSesError(error, TRANSPORT_NAME);
    }
    const receipt: SendReceipt = {
      messageId: message.messageId,
      accepted: [...message.envelope.to],
      rejected: [],
      response: messageId ? `250 Ok ${messageId}` : '250 Ok',
      transport: TRANSPORT_NAME,
    };
    if (messageId) receipt.providerMessageId = messageId;
    return receipt;
  }

  return {
    name: TRANSPORT_NAME,
    // `dkim: false` leaves messages unsigned by the core, for an account whose SES identity signs (Easy DKIM).
    capabilities: { dkim: sign, maxConcurrency, textEncoding },
    send,
    sendRaw: send,

    async verify(): Promise<void> {
      try {
        // A paused account still starts: the worker waits its pause out, and accepted mail is kept.
        await client.send(new GetAccountCommand({}));
      } catch (error) {
        // Any answer of the service but a refusal of our credentials proves the endpoint is reached:
        // a send-only IAM policy may not read the account, and an emulator may not know it.
        if (reachedService(error)) return;
        throw toSesError(error, TRANSPORT_NAME);
      }
    },

    async close(): Promise<void> {
      client.destroy();
    },
  };
}

function clientConfig(options: SesTransportOptions): SESv2ClientConfig {
  const config: SESv2ClientConfig = { region: options.region, maxAttempts: 1 };
  if (options.endpoint) config.endpoint = options.endpoint;
  if (options.credentials) config.credentials = options.credentials;
  return config;
}

// Replies that say the credentials themselves are wrong, not that the caller may not read the account.
const CREDENTIAL_REFUSALS = new Set([
  'UnrecognizedClientException',
  'InvalidSignatureException',
  'SignatureDoesNotMatch',
  'InvalidClientTokenId',
  'ExpiredTokenException',
  'IncompleteSignature',
]);

function reachedService(error: unknown): boolean {
  if (typeof error !== 'object' || error === null) return false;
  const { name, $metadata } = error as { name?: unknown; $metadata?: { httpStatusCode?: unknown } };
  const status = $metadata?.httpStatusCode;
  if (typeof status !== 'number' || status >= 500) return false;
  return typeof name !== 'string' || !CREDENTIAL_REFUSALS.has(name);
}
