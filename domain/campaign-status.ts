/**
 * A campaign's processing states (campaigns.status) and what moves it between them:
 *
 *   paused ──dispatch confirmed──▶ scheduled ──its time──▶ queued ──last message settled──▶ completed
 *      │                              │                      │
 *      └──────────── cancel ──────────┴──────── cancel ──────┴──▶ canceled
 *
 * `paused` is a saved campaign whose dispatch Temporal has not confirmed yet (Herald's sweeper
 * dispatches it); a campaign without `send_at` goes from paused straight to queued.
 */
export const CAMPAIGN_STATUSES = [
  'paused',
  'scheduled',
  'queued',
  'completed',
  'canceled',
] as const;
export type CampaignStatus = (typeof CAMPAIGN_STATUSES)[number];

/** A campaign in one of these states sends nothing more. */
export const FINAL_CAMPAIGN_STATUSES: readonly CampaignStatus[] = ['completed', 'canceled'];

/** `send_at` at least this far ahead... */
export const SCHEDULE_MIN_AHEAD_MS = 60_000;
/** ...and at most this far. */
export const SCHEDULE_MAX_AHEAD_DAYS = 35;
const DAY_MS = 86_400_000;

/** Whether `sendAt` is far enough ahead of `now`, and not too far, to be scheduled. */
export function isSchedulable(sendAt: Date, now: Date): boolean {
  const ahead = sendAt.getTime() - now.getTime();
  return ahead >= SCHEDULE_MIN_AHEAD_MS && ahead <= SCHEDULE_MAX_AHEAD_DAYS * DAY_MS;
}

export const SCHEDULE_WINDOW_ERROR = `The send at field must be a date between 1 minute and ${SCHEDULE_MAX_AHEAD_DAYS} days from now.`;
