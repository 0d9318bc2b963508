/** herald secrets rotate: re-encrypts every stored ciphertext under HERALD_SECRET's newest key. */
import { type RotationCounts, rotateSecrets } from '../../commands/operations/rotate-secrets.js';
import { type AdminContext, operatorActor } from '../context.js';
import type { CommandResult } from './options.js';
import type { AdminCommand } from './table.js';

const LABELS = {
  'provider-credentials': 'provider credentials',
  'webhook-secrets': 'webhook signing secrets',
  'webhook-previous-secrets': 'webhook secrets still signing after a rotation',
  'totp-secrets': 'two-step verification secrets',
} as const;

const JSON_NAMES = {
  'provider-credentials': 'provider_credentials',
  'webhook-secrets': 'webhook_secrets',
  'webhook-previous-secrets': 'webhook_previous_secrets',
  'totp-secrets': 'totp_secrets',
} as const;

/**
 * herald secrets rotate → {"provider_credentials": {"reencrypted", "current", "unreadable"},
 * "webhook_secrets": {…}, "webhook_previous_secrets": {…}, "totp_secrets": {…}}
 */
export async function secretsRotate(context: AdminContext): Promise<CommandResult> {
  const report = await rotateSecrets(context, operatorActor());
  const columns = Object.keys(report) as (keyof typeof report)[];
  const line = (column: keyof typeof report) => {
    const counts: RotationCounts = report[column];
    const unreadable = counts.unreadable
      ? `, ${counts.unreadable} under no key of HERALD_SECRET (left as they are)`
      : '';
    return `${LABELS[column]}: ${counts.reencrypted} re-encrypted, ${counts.current} already under the newest key${unreadable}`;
  };
  return {
    json: Object.fromEntries(columns.map((column) => [JSON_NAMES[column], report[column]])),
    human: `${columns.map(line).join('\n')}\nOnce every process runs with the new ring, older keys can leave HERALD_SECRET (docs/operations.md, "Secret rotation").`,
  };
}

export const SECRET_COMMANDS: AdminCommand[] = [
  {
    name: 'secrets rotate',
    run: secretsRotate,
    synopses: [[[]]],
    summary: "re-encrypts stored secrets under HERALD_SECRET's newest key",
  },
];
