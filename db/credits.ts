import type { Sql, TransactionSql } from './client.js';

/** Adds credits to a workspace: one ledger row and the balance, together. */
export async function addCredits(sql: Sql, workspaceId: number, amount: number) {
  return sql.begin((tx) => addCreditsIn(tx, workspaceId, amount));
}

/** As addCredits, within `tx`: the transaction that also records who added them. */
export async function addCreditsIn(tx: TransactionSql, workspaceId: number, amount: number) {
  await tx`
    insert into credit_ledger (workspace_id, amount, reason)
    values (${workspaceId}, ${amount}, 'top_up')`;
  const [row] = await tx<{ creditBalance: number }[]>`
    update workspaces set credit_balance = credit_balance + ${amount}
    where id = ${workspaceId} returning credit_balance`;
  return row?.creditBalance ?? 0;
}

/** The balance and the ledger's sum, which must always agree. */
export async function creditBalance(sql: Sql, workspaceId: number) {
  const [row] = await sql<{ balance: number; ledgerSum: number }[]>`
    select w.credit_balance as balance,
      coalesce((select sum(amount) from credit_ledger where workspace_id = w.id), 0)::bigint
        as ledger_sum
    from workspaces w where w.id = ${workspaceId}`;
  return row ?? { balance: 0, ledgerSum: 0 };
}
