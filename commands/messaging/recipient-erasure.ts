/**
 * Erasing one person's number (GDPR art. 17): everywhere Herald holds it, in one workspace or in
 * all (db/recipient-erasure.ts). The CLI (`herald recipient erase`) and the console's owners share
 * it. The erasure and its audit line (the number only masked) are one transaction.
 */
import { type ErasedRows, eraseRecipientIn } from '../../db/recipient-erasure.js';
import type { Workspace } from '../../db/workspaces.js';
import { E164, maskedNumber } from '../../domain/phone.js';
import { erasedRecipient } from '../../security/recipient-hash.js';
import type { Actor } from '../actor.js';
import { writeAudit } from '../audit.js';
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

/**
 * Erases the number, in one workspace or (none given) in all: then the audit line is the
 * deployment's. Nothing is recorded when nothing changed.
 */
export async function eraseRecipientNumber(
  deps: Deps,
  input: { number?: string; workspace?: string },
  actor: Actor,
): Promise<RecipientErasure> {
  const number = requiredText(input.number, { field: 'number' }).replaceAll(' ', '');
  if (!E164.test(number))
    throw invalid`${{ field: 'number' }} must be a phone number in E.164 form, like +61412345678`;
  const workspace =
    input.workspace === undefined ? null : await findWorkspace(deps, input.workspace);
  const masked = maskedNumber(number);
  return deps.sql.begin(async (tx) => {
    const rows = await eraseRecipientIn(tx, {
      number,
      workspaceId: workspace?.id ?? null,
      erasedForm: erasedRecipient(deps.secret, number),
    });
    const erasure = { masked, workspace, rows, changed: sum(Object.values(rows)) };
    if (erasure.changed > 0)
      await writeAudit(tx, actor, workspace?.id ?? null, {
        action: 'recipient.erased',
        target: `recipient ${masked}`,
        details: erasedCounts(erasure),
      });
    return erasure;
  });
}

const sum = (counts: number[]) => counts.reduce((total, count) => total + count, 0);

/** The rows changed, by kind as presentErasure names them: those with none left out. */
function erasedCounts(erasure: RecipientErasure): Record<string, number> {
  const {
    recipient: _recipient,
    workspace: _workspace,
    erased: _erased,
    ...rows
  } = presentErasure(erasure);
  return Object.fromEntries(Object.entries(rows).filter(([, count]) => count > 0));
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
