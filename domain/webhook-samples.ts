/**
 * A sample event per type (the Webhooks page's samples, and the data of a test event): the keys
 * and value shapes of what the outbox's writers put in `data` (the triggers of 0007, 0033 and
 * 0036, and db/fraud-guard.ts). test/integration/console-webhook-tools.test.ts compares each
 * sample's keys with a real event of its type, so the two cannot drift apart unnoticed. The body
 * around `data` is built by `webhookBody`, the function every delivery uses.
 */
import type { WebhookEventType } from './webhooks.js';

const AT = '2026-11-27T09:30:00.000Z';
const LATER = '2026-11-27T09:30:04.000Z';

const message = {
  campaign_id: 1042,
  message_seq: 1,
  reference: 'order-7731',
  recipient: '+61412555011',
  provider: 'twilio-main',
  provider_message_id: 'SM8f1c2d3e4a5b6c7d8e9f0a1b2c3d4e5f',
};
const campaign = { campaign_id: 1042, reference: 'order-7731', name: 'November news' };
const otp = {
  request_id: 'a3c5e7f9-1b2d-4f6a-8c0e-2a4c6e8f0b1d',
  purpose: 'login',
  recipient: '+61412555011',
  provider: 'twilio-main',
  provider_message_id: 'SM0a1b2c3d4e5f60718293a4b5c6d7e8f9',
  sender_id: 'Acme',
  created_at: AT,
  expires_at: '2026-11-27T09:35:00.000Z',
};

export const WEBHOOK_SAMPLE_DATA: Record<WebhookEventType, Record<string, unknown>> = {
  'message.sent': {
    ...message,
    status: 'sent',
    stage: null,
    error: null,
    error_code: null,
    submitted_at: AT,
    delivered_at: null,
  },
  'message.delivered': {
    ...message,
    status: 'delivered',
    stage: null,
    error: null,
    error_code: null,
    submitted_at: AT,
    delivered_at: LATER,
  },
  'message.failed': {
    ...message,
    status: 'undelivered',
    stage: 'delivery',
    error: null,
    error_code: 'EC_ABSENT',
    submitted_at: AT,
    delivered_at: LATER,
  },
  'message.received': {
    inbound_id: 311,
    from: '+61412555011',
    to: '+61480000000',
    text: 'See you at 10',
    provider: 'twilio-main',
    provider_message_id: 'SM6e5d4c3b2a1f0e9d8c7b6a5f4e3d2c1b',
    campaign_id: 1042,
    received_at: AT,
  },
  'campaign.completed': {
    ...campaign,
    status: 'completed',
    total_recipients: 3,
    sent_count: 3,
    failed_count: 0,
    created_at: AT,
    completed_at: LATER,
  },
  'campaign.canceled': {
    ...campaign,
    status: 'canceled',
    total_recipients: 3,
    queued_count: 0,
    sent_count: 1,
    failed_count: 0,
    canceled_count: 2,
    created_at: AT,
    scheduled_at: null,
    completed_at: LATER,
  },
  'otp.accepted': { ...otp, status: 'accepted', verified_at: null },
  'otp.verified': { ...otp, status: 'verified', verified_at: LATER },
  'otp.expired': { ...otp, status: 'expired', verified_at: null },
  'otp.range_blocked': {
    range: '+614125550',
    sends: 40,
    verified: 0,
    window_seconds: 600,
    blocked_until: '2026-11-27T10:30:00.000Z',
    blocked_at: AT,
  },
  'spend.cap_near': {
    day: '2026-11-27',
    cap_segments: 10000,
    used_segments: 8000,
    threshold_percent: 80,
  },
};

/**
 * The JSON body of a delivery: every attempt of every event (and a test event, marked `test`)
 * is this. A sample shown in the console is this too.
 */
export function webhookBody(event: {
  type: string;
  createdAt: Date;
  data: unknown;
  test?: boolean;
}): string {
  return JSON.stringify({
    type: event.type,
    timestamp: event.createdAt.toISOString(),
    ...(event.test && { test: true }),
    data: event.data,
  });
}
