/**
 * `herald secrets rotate`: every ciphertext Herald stores, encrypted anew under HERALD_SECRET's
 * newest key, so the older keys can leave the ring (docs/operations.md "Secret rotation"). Idempotent: a value
 * already under the newest key is left alone. In batches, each rewrite a compare-and-set, so api
 * and worker processes keep running (with the same ring) while it works.
 */
import {
  ENCRYPTED_COLUMNS,
  type EncryptedColumn,
  type EncryptedValue,
  encryptedValues,
  replaceCiphertext,
} from '../../db/encrypted-columns.js';
import {
  CredentialsError,
  providerCredentialsContext,
  reencryptCredentials,
} from '../../security/credentials.js';
import { webhookSecretContext } from '../../security/webhook-signature.js';
import type { Actor } from '../actor.js';
import { writeAudit } from '../audit.js';
import type { CommandDeps } from '../deps.js';
import { totpSecretContext } from '../team/totp.js';

export interface RotationCounts {
  /** Encrypted anew under the newest key. */
  reencrypted: number;
  /** Already under the newest key. */
  current: number;
  /** Under no key of the ring (or tampered): left as they are, and unusable either way. */
  unreadable: number;
}

export type RotationReport = Record<EncryptedColumn, RotationCounts>;

const BATCH_SIZE = 500;
/** A row changed under the rotation is read again, a few times at most. */
const ATTEMPTS_PER_ROW = 3;

function contextOf(column: EncryptedColumn, row: EncryptedValue): string {
  switch (column) {
    case 'provider-credentials':
      return providerCredentialsContext(row.workspaceId as number, row.slug as string);
    case 'webhook-secrets':
    case 'webhook-previous-secrets':
      return webhookSecretContext(row.workspaceId as number, row.id);
    case 'totp-secrets':
      return totpSecretContext(row.id);
  }
}

type Deps = Pick<CommandDeps, 'sql' | 'secret'>;

/** One row: 'reencrypted', 'current', 'unreadable', or 'gone' (deleted meanwhile). */
async function rotateRow(
  deps: Deps,
  column: EncryptedColumn,
  first: EncryptedValue,
): Promise<keyof RotationCounts | 'gone'> {
  let row: EncryptedValue | undefined = first;
  for (let attempt = 0; attempt < ATTEMPTS_PER_ROW && row; attempt++) {
    let fresh: Buffer | undefined;
    try {
      fresh = reencryptCredentials(deps.secret, contextOf(column, row), row.ciphertext);
    } catch (error) {
      if (error instanceof CredentialsError) return 'unreadable';
      throw error;
    }
    if (!fresh) return 'current';
    if (await replaceCiphertext(deps.sql, column, row.id, row.ciphertext, fresh)) {
      return 'reencrypted';
    }
    // Changed since it was read (an operator updated it, or deleted it): read it again.
    const [again]: EncryptedValue[] = await encryptedValues(deps.sql, column, row.id - 1, 1);
    row = again?.id === row.id ? again : undefined;
  }
  return row ? 'unreadable' : 'gone';
}

export async function rotateSecrets(
  deps: Deps,
  actor: Actor,
  options: { batchSize?: number } = {},
): Promise<RotationReport> {
  const batchSize = options.batchSize ?? BATCH_SIZE;
  const report = {} as RotationReport;
  for (const column of ENCRYPTED_COLUMNS) {
    const counts: RotationCounts = { reencrypted: 0, current: 0, unreadable: 0 };
    let afterId = 0;
    for (;;) {
      const batch = await encryptedValues(deps.sql, column, afterId, batchSize);
      for (const row of batch) {
        const outcome = await rotateRow(deps, column, row);
        if (outcome !== 'gone') counts[outcome] += 1;
      }
      if (batch.length < batchSize) break;
      afterId = (batch.at(-1) as EncryptedValue).id;
    }
    report[column] = counts;
  }
  // Each row is re-encrypted on its own (a rerun finishes what a crash left), so the line, with
  // how many each column had re-encrypted (never a key), is written once they all are.
  await writeAudit(deps.sql, actor, null, {
    action: 'secrets.rotated',
    target: 'stored secrets',
    details: Object.fromEntries(
      ENCRYPTED_COLUMNS.map((column) => [
        `${column.replaceAll('-', '_')}_reencrypted`,
        report[column].reencrypted,
      ]),
    ),
  });
  return report;
}
