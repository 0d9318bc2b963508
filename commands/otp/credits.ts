/** Prepaid credits a workspace's OTP sends draw on. */
import { addCreditsIn } from '../../db/credits.js';
import type { Workspace } from '../../db/workspaces.js';
import type { Actor } from '../actor.js';
import { writeAudit } from '../audit.js';
import type { CommandDeps } from '../deps.js';
import { fieldsOf, invalid } from '../input.js';
import { findWorkspace } from '../team/workspaces.js';

export interface AddCreditsInput {
  workspace?: string;
  /** A positive whole number. */
  amount?: number;
}

/** Adds the credits and writes the audit line in the same transaction. */
export async function addCredits(
  deps: Pick<CommandDeps, 'sql'>,
  input: AddCreditsInput,
  actor: Actor,
): Promise<{ amount: number; balance: number; workspace: Workspace }> {
  const field = fieldsOf<AddCreditsInput>();
  const workspace = await findWorkspace(deps, input.workspace);
  const amount = input.amount;
  if (amount === undefined) throw invalid`${field('amount')} is required`;
  if (!Number.isSafeInteger(amount) || amount <= 0)
    throw invalid`${field('amount')} must be a positive integer`;
  const balance = await deps.sql.begin(async (tx) => {
    const balance = await addCreditsIn(tx, workspace.id, amount);
    await writeAudit(tx, actor, workspace.id, {
      action: 'credits.added',
      target: `workspace ${workspace.slug}`,
      details: { amount, balance },
    });
    return balance;
  });
  return { amount, balance, workspace };
}
