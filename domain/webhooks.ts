/** Customer webhooks: event types and the delivery schedule. Pure; safe to import from workflows. */

export const WEBHOOK_EVENT_TYPES = [
  'message.sent',
  'message.delivered',
  'message.failed',
  /** A recipient's reply other than STOP/START (docs/providers.md "Replies"). */
  'message.received',
  'campaign.completed',
  'campaign.canceled',
  'otp.accepted',
  'otp.verified',
  'otp.expired',
  'otp.range_blocked',
  'spend.cap_near',
] as const;

export type WebhookEventType = (typeof WEBHOOK_EVENT_TYPES)[number];

/**
 * Events whose data carry a recipient's full phone number (`recipient`): subscribing to them
 * needs the `recipients.read` permission, as seeing the numbers in the console does.
 */
export const RECIPIENT_EVENT_TYPES: readonly WebhookEventType[] = [
  'message.sent',
  'message.delivered',
  'message.failed',
  'message.received',
  'otp.accepted',
  'otp.verified',
  'otp.expired',
];

export function isWebhookEventType(value: string): value is WebhookEventType {
  return (WEBHOOK_EVENT_TYPES as readonly string[]).includes(value);
}

/**
 * Waits between delivery attempts: the first attempt goes at once, then after 5 s, 5 min, 30 min,
 * 2 h, 5 h, 10 h, 10 h, 24 h and 24 h — ten attempts over 3 days 3 h 35 min 5 s. When the last
 * one fails the endpoint is disabled.
 */
export const WEBHOOK_RETRY_DELAYS_MS: readonly number[] = [
  5_000,
  5 * 60_000,
  30 * 60_000,
  2 * 3_600_000,
  5 * 3_600_000,
  10 * 3_600_000,
  10 * 3_600_000,
  24 * 3_600_000,
  24 * 3_600_000,
];

export const WEBHOOK_MAX_ATTEMPTS = WEBHOOK_RETRY_DELAYS_MS.length + 1;

/** One attempt: the whole exchange (connect, send, response headers) within this. */
export const WEBHOOK_ATTEMPT_TIMEOUT_MS = 15_000;

/** Human form of a duration in milliseconds: `5 s`, `30 min`, `1 d 3 h`. */
export function formatDelay(ms: number): string {
  const units: [number, string][] = [
    [86_400_000, 'd'],
    [3_600_000, 'h'],
    [60_000, 'min'],
    [1000, 's'],
  ];
  const parts: string[] = [];
  let rest = ms;
  for (const [size, unit] of units) {
    if (rest >= size) {
      parts.push(`${Math.floor(rest / size)} ${unit}`);
      rest %= size;
    }
  }
  return parts.length ? parts.join(' ') : `${ms} ms`;
}
