import { createHmac, randomBytes } from 'node:crypto';

/** Prefix of a signing secret (Standard Webhooks). */
const SECRET_PREFIX = 'whsec_';

/** A new signing secret: `whsec_` + base64 of 24 random bytes. */
export function newWebhookSecret(): string {
  return SECRET_PREFIX + randomBytes(24).toString('base64');
}

/** The HMAC key of a secret (the base64 after `whsec_`). */
export function secretKey(secret: string): Buffer {
  return Buffer.from(
    secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret,
    'base64',
  );
}

/**
 * The headers of one Standard Webhooks request: `webhook-id`, `webhook-timestamp` (seconds) and
 * `webhook-signature: v1,<base64 of HMAC-SHA256(key, id.timestamp.body)>`. Receivers verify them with the
 * `standardwebhooks` or `svix` libraries unchanged.
 */
export function signedHeaders(
  key: Buffer,
  id: string,
  timestampSeconds: number,
  body: string,
): Record<string, string> {
  const signature = createHmac('sha256', key).update(`${id}.${timestampSeconds}.${body}`).digest('base64');
  return {
    'webhook-id': id,
    'webhook-timestamp': String(timestampSeconds),
    'webhook-signature': `v1,${signature}`,
  };
}
