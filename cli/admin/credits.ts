/** herald credits add: options in, use-case, output. */
import { addCredits } from '../../commands/otp/credits.js';
import type { AdminContext } from '../context.js';
import {
  type CommandResult,
  type Options,
  optional,
  optionOf,
  run,
  text,
  wholeNumber,
} from './options.js';
import { type AdminCommand, required } from './table.js';

/** herald credits add --workspace <slug> --amount <n> → {"balance"} */
export async function creditsAdd(context: AdminContext, options: Options): Promise<CommandResult> {
  const raw = optional(options, 'amount');
  // The refusal quotes the amount as typed.
  const label = (field: string) =>
    field === 'amount' && raw !== undefined ? `--amount "${raw}"` : optionOf(field);
  const { amount, balance, workspace } = await run(
    addCredits(
      context,
      {
        workspace: text(options, 'workspace'),
        amount: wholeNumber(options, 'amount'),
      },
      context.actor,
    ),
    label,
  );
  return {
    json: { balance },
    human: `Added ${amount} credits to ${workspace.slug}; the balance is ${balance}`,
  };
}

export const CREDIT_COMMANDS: AdminCommand[] = [
  {
    name: 'credits add',
    run: creditsAdd,
    synopses: [[[required('workspace', '<slug>'), required('amount', '<n>')]]],
  },
];
