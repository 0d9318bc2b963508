/** A workspace's latest batches, newest first, whatever their source (the CLI's `campaign list`). */
import { listRecentBatches, type ReportBatch } from '../../db/reporting.js';
import type { Workspace } from '../../db/workspaces.js';
import type { CommandDeps } from '../deps.js';
import { fieldsOf, invalid } from '../input.js';
import { findWorkspace } from '../team/workspaces.js';

export const BATCH_LIST_LIMIT = { min: 1, max: 1000, default: 20 };

export interface ListBatchesInput {
  workspace?: string;
  /** 1 to 1000; 20 when not given. */
  limit?: number;
}

/** How a batch was created: an API send, a Quick Send, or a campaign (a named batch). */
export type BatchSource = 'api' | 'quick_send' | 'campaign';

export const sourceOf = (batch: ReportBatch): BatchSource | null =>
  batch.kind === 'campaign' ? 'campaign' : batch.source;

export async function listRecentWorkspaceBatches(
  deps: Pick<CommandDeps, 'sql'>,
  input: ListBatchesInput,
): Promise<{ batches: ReportBatch[]; workspace: Workspace }> {
  const limit = input.limit ?? BATCH_LIST_LIMIT.default;
  if (!Number.isInteger(limit) || limit < BATCH_LIST_LIMIT.min || limit > BATCH_LIST_LIMIT.max)
    throw invalid`${fieldsOf<ListBatchesInput>()('limit')} must be a whole number from ${BATCH_LIST_LIMIT.min} to ${BATCH_LIST_LIMIT.max}`;
  const workspace = await findWorkspace(deps, input.workspace);
  return {
    batches: await listRecentBatches(deps.sql, workspace.id, undefined, limit),
    workspace,
  };
}
