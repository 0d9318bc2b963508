import { createHmac, randomBytes } from 'node:crypto';

/**
 * Standard Webhooks signing (https://www.standardwebhooks.com/): the secret is `whsec_` and the
 * base64 of 32 random bytes; each request carries `webhook-id`, `webhook-timestamp` (unix
 * seconds) and `webhook-signature: v1,<base64 HMAC-SHA256 of "<id>.<timestamp>.<body>">`, keyed
 * with the secret's decoded bytes.
 */

const PREFIX = 'whsec_';
const SECRET_BYTES = 32;

export function generateWebhookSecret(): string {
  return PREFIX + randomBytes(SECRET_BYTES).toString('base64');
}

function secretBytes(secret: string): Buffer {
  if (!secret.startsWith(PREFIX)) throw new Error('a webhook secret starts with whsec_');
  return Buffer.from(secret.slice(PREFIX.length), 'base64');
}

export function signWebhook(secret: string, id: string, timestamp: number, body: string): string {
  const mac = createHmac('sha256', secretBytes(secret))
    .update(`${id}.${timestamp}.${body}`)
    .digest('base64');
  return `v1,${mac}`;
}

/**
 * The headers of one attempt; `timestamp` is the attempt's own, in unix seconds. With several
 * secrets (a rotation's overlap: the new one first, then the one it replaced) the signature
 * header carries one `v1,…` per secret, space-separated, as Standard Webhooks allows: a receiver
 * holding either secret verifies it.
 */
export function webhookHeaders(
  secrets: string | readonly string[],
  id: string,
  timestamp: number,
  body: string,
): Record<string, string> {
  const signing = typeof secrets === 'string' ? [secrets] : secrets;
  return {
    'content-type': 'application/json',
    'webhook-id': id,
    'webhook-timestamp': String(timestamp),
    'webhook-signature': signing
      .map((secret) => signWebhook(secret, id, timestamp, body))
      .join(' '),
  };
}

/** The additional authenticated data of an endpoint's encrypted secret (security/credentials.ts). */
export const webhookSecretContext = (workspaceId: number, endpointId: number) =>
  `webhook-endpoint:${workspaceId}:${endpointId}`;
