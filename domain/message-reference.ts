/**
 * The reference Herald gives each message it submits, echoed by providers in their receipts:
 * `cmp-<campaign id>-<seq>` for a campaign's message, `otp-<request uuid>` for a code.
 */

export type MessageTarget = { campaignId: number; seq: number } | { otpRequestId: string };

/** Campaign ids are bigint, but every id Herald issues is a safe integer; seq is an int4. */
const CAMPAIGN_REFERENCE = /^cmp-([1-9]\d{0,15})-([1-9]\d{0,9})$/;
const MAX_SEQ = 2 ** 31 - 1;
const OTP_REFERENCE = /^otp-([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})$/;

export const campaignMessageReference = (campaignId: number, seq: number) =>
  `cmp-${campaignId}-${seq}`;

export const otpMessageReference = (requestId: string) => `otp-${requestId}`;

/** The message a reference names, or undefined when it cannot name one (malformed, out of range). */
export function parseMessageReference(reference: string): MessageTarget | undefined {
  const campaign = CAMPAIGN_REFERENCE.exec(reference);
  if (campaign) {
    const campaignId = Number(campaign[1]);
    const seq = Number(campaign[2]);
    return Number.isSafeInteger(campaignId) && seq <= MAX_SEQ ? { campaignId, seq } : undefined;
  }
  const otp = OTP_REFERENCE.exec(reference);
  return otp ? { otpRequestId: otp[1] as string } : undefined;
}
