/** Prepaid credits a workspace's OTP sends draw on. */
import { addCredits as addCreditsRow } from '../../db/credits.js';
import type { Workspace } from '../../db/workspaces.js';
import type { CommandDeps } from '../deps.js';
import { fieldsOf, invalid } from '../input.js';
import { findWorkspace } from '../team/workspaces.js';

export interface AddCreditsInput {
  workspace?: string;
  /** A positive whole number. */
  amount?: number;
}

export async function addCredits(
  deps: Pick<CommandDeps, 'sql'>,
  input: AddCreditsInput,
): Promise<{ amount: number; balance: number; workspace: Workspace }> {
  const field = fieldsOf<AddCreditsInput>();
  const workspace = await findWorkspace(deps, input.workspace);
  const amount = input.amount;
  if (amount === undefined) throw invalid`${field('amount')} is required`;
  if (!Number.isSafeInteger(amount) || amount <= 0)
    throw invalid`${field('amount')} must be a positive integer`;
  const balance = await addCreditsRow(deps.sql, workspace.id, amount);
  return { amount, balance, workspace };
}
