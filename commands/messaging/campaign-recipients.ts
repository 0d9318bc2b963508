/**
 * A campaign's recipients with their status, a page at a time: the REST listing
 * (GET /api/v1/messages/{campaign}/recipients) and `herald campaign recipients`. Numbers are
 * masked here, before any caller sees them, unless the caller may read them in full.
 */
import {
  type CampaignRecipientRow,
  campaignExists,
  listCampaignRecipients,
} from '../../db/campaign-recipients.js';
import { maskedNumber, numberShown } from '../../domain/phone.js';
import { type RecipientQuery, recipientCursor } from '../../domain/recipient-listing.js';
import type { CommandDeps } from '../deps.js';

/** A row as listed: its number as the key may see it. */
export type ListedRecipient = Omit<CampaignRecipientRow, 'seq'>;

export interface RecipientListing {
  recipients: ListedRecipient[];
  /** The cursor of the next page, or null on the last. */
  nextCursor: string | null;
}

/** `text` with `number` masked wherever it occurs, with its + or without (a provider's error). */
function withNumberMasked(text: string, number: string): string {
  const masked = maskedNumber(number);
  return text.replaceAll(number, masked).replaceAll(number.slice(1), masked);
}

function shown(row: CampaignRecipientRow, fullNumbers: boolean): ListedRecipient {
  const { seq: _seq, recipient, errorCode, ...rest } = row;
  // An erased or retained-past number is stored masked already, and its texts scrubbed.
  const masking = !fullNumbers && recipient.startsWith('+');
  return {
    recipient: numberShown(recipient, fullNumbers),
    errorCode: masking && errorCode !== null ? withNumberMasked(errorCode, recipient) : errorCode,
    ...rest,
  };
}

/**
 * One page of the campaign's recipients in seq order (its messages, then the numbers its send
 * left out); undefined when there is no such campaign in `workspaceId` (null: an operator's look,
 * any workspace).
 */
export async function listRecipients(
  deps: Pick<CommandDeps, 'sql'>,
  input: {
    campaignId: number;
    workspaceId: number | null;
    query: RecipientQuery;
    fullNumbers: boolean;
  },
): Promise<RecipientListing | undefined> {
  const { campaignId, workspaceId, query, fullNumbers } = input;
  if (!(await campaignExists(deps.sql, campaignId, workspaceId))) return undefined;
  // One more than asked tells whether another page follows.
  const rows = await listCampaignRecipients(deps.sql, {
    campaignId,
    afterSeq: query.afterSeq,
    status: query.status,
    limit: query.limit + 1,
  });
  const page = rows.slice(0, query.limit);
  const last = page.at(-1);
  return {
    recipients: page.map((row) => shown(row, fullNumbers)),
    nextCursor: rows.length > query.limit && last ? recipientCursor(last.seq) : null,
  };
}

/** The listing as the REST answer's `data` and `--json` print it. */
export function presentRecipients(listing: RecipientListing) {
  return {
    recipients: listing.recipients.map((recipient) => ({
      recipient: recipient.recipient,
      status: recipient.status,
      error_code: recipient.errorCode,
      provider: recipient.provider,
      sent_at: recipient.sentAt?.toISOString() ?? null,
      receipt_at: recipient.receiptAt?.toISOString() ?? null,
    })),
    next_cursor: listing.nextCursor,
  };
}
