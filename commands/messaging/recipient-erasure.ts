/**
 * Erasing one person's number (GDPR art. 17): everywhere Herald holds it, in one workspace or in
 * all (db/recipient-erasure.ts). The CLI (`herald recipient erase`) and the console's owners share
 * it; each front end records the audit entry, which names the number only masked.
 */
import { type ErasedRows, eraseRecipient } from '../../db/recipient-erasure.js';
import type { Workspace } from '../../db/workspaces.js';
import { E164, maskedNumber } from '../../domain/phone.js';
import { erasedRecipient } from '../../security/recipient-hash.js';
import type { CommandDeps } from '../deps.js';
import { invalid, requiredText } from '../input.js';
import { findWorkspace } from '../team/workspaces.js';

type Deps = Pick<CommandDeps, 'sql' | 'secret'>;

export interface RecipientErasure {
  /** As the audit log and every answer show it: `•••• 5678`. */
  masked: string;
  workspace: Workspace | null;
  rows: ErasedRows;
  /** Rows changed; 0 when the number was already erased (or never held): nothing changed. */
  changed: number;
}

export async function eraseRecipientNumber(
  deps: Deps,
  input: { number?: string; workspace?: string },
): Promise<RecipientErasure> {
  const number = requiredText(input.number, { field: 'number' }).replaceAll(' ', '');
  if (!E164.test(number))
    throw invalid`${{ field: 'number' }} must be a phone number in E.164 form, like +61412345678`;
  const workspace =
    input.workspace === undefined ? null : await findWorkspace(deps, input.workspace);
  const rows = await eraseRecipient(deps.sql, {
    number,
    workspaceId: workspace?.id ?? null,
    erasedForm: erasedRecipient(deps.secret, number),
  });
  const changed = Object.values(rows).reduce((sum, count) => sum + count, 0);
  return { masked: maskedNumber(number), workspace, rows, changed };
}

/** The answer as `--json` prints it. */
export function presentErasure(erasure: RecipientErasure) {
  const { rows } = erasure;
  return {
    recipient: erasure.masked,
    workspace: erasure.workspace?.slug ?? null,
    erased: erasure.changed > 0,
    campaign_messages: rows.campaignMessages,
    otp_requests: rows.otpRequests,
    otp_verification_failures: rows.verificationFailures,
    opt_outs_hashed: rows.optOuts,
    opt_out_links: rows.optOutLinks,
    webhook_events: rows.webhookEvents,
    inbound_messages: rows.inboundMessages,
    idempotency_records: rows.idempotencyRecords,
    audit_entries: rows.auditEntries,
    texts: rows.texts,
  };
}
