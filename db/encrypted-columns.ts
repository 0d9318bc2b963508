/**
 * Every column Herald encrypts under HERALD_SECRET (security/credentials.ts), read and rewritten
 * by `herald secrets rotate` (commands/operations/rotate-secrets.ts): in batches by id, each rewrite a
 * compare-and-set on the ciphertext it replaces, so a concurrent change is never overwritten.
 */
import type { Sql } from './client.js';

export type EncryptedColumn =
  | 'provider-credentials'
  | 'webhook-secrets'
  | 'webhook-previous-secrets'
  | 'totp-secrets';

export const ENCRYPTED_COLUMNS: readonly EncryptedColumn[] = [
  'provider-credentials',
  'webhook-secrets',
  'webhook-previous-secrets',
  'totp-secrets',
];

/** One stored ciphertext and what its additional authenticated data is made of. */
export interface EncryptedValue {
  id: number;
  workspaceId: number | null;
  /** The provider's slug (provider credentials only). */
  slug: string | null;
  ciphertext: Buffer;
}

/** The next `limit` ciphertexts of a column with an id above `afterId`, in id order. */
export async function encryptedValues(
  sql: Sql,
  column: EncryptedColumn,
  afterId: number,
  limit: number,
): Promise<EncryptedValue[]> {
  switch (column) {
    case 'provider-credentials':
      return sql<EncryptedValue[]>`
        select id::int, workspace_id::int, slug, credentials as ciphertext from providers
        where credentials is not null and id > ${afterId} order by id limit ${limit}`;
    case 'webhook-secrets':
      return sql<EncryptedValue[]>`
        select id::int, workspace_id::int, null as slug, secret as ciphertext from webhook_endpoints
        where id > ${afterId} order by id limit ${limit}`;
    // The secret a rotation replaced, kept while it signs beside the new one (and after, unread).
    case 'webhook-previous-secrets':
      return sql<EncryptedValue[]>`
        select id::int, workspace_id::int, null as slug, previous_secret as ciphertext
        from webhook_endpoints
        where previous_secret is not null and id > ${afterId} order by id limit ${limit}`;
    case 'totp-secrets':
      return sql<EncryptedValue[]>`
        select id::int, null::int as workspace_id, null as slug, totp_secret as ciphertext from users
        where totp_secret is not null and id > ${afterId} order by id limit ${limit}`;
  }
}

/** Replaces `from` by `to`; false when the row no longer holds `from` (changed or deleted). */
export async function replaceCiphertext(
  sql: Sql,
  column: EncryptedColumn,
  id: number,
  from: Buffer,
  to: Buffer,
): Promise<boolean> {
  switch (column) {
    case 'provider-credentials':
      return (
        (
          await sql`update providers set credentials = ${to} where id = ${id} and credentials = ${from}`
        ).count === 1
      );
    case 'webhook-secrets':
      return (
        (
          await sql`update webhook_endpoints set secret = ${to} where id = ${id} and secret = ${from}`
        ).count === 1
      );
    case 'webhook-previous-secrets':
      return (
        (
          await sql`
            update webhook_endpoints set previous_secret = ${to}
            where id = ${id} and previous_secret = ${from}`
        ).count === 1
      );
    case 'totp-secrets':
      return (
        (await sql`update users set totp_secret = ${to} where id = ${id} and totp_secret = ${from}`)
          .count === 1
      );
  }
}
