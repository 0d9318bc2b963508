/**
 * Every figure Herald reports about a workspace, computed at one fixed time, so that two calls
 * compare equal exactly when nothing reported moved: the REST campaign lookups, the console's
 * dashboard, batch lists, batch reports and recipient pages (as a member without recipients.read
 * sees them), the fraud guard's report, the credit balance and ledger, and every MCP tool.
 */
import {
  listBatches,
  loadBatchRecipients,
  loadBatchReport,
} from '../../commands/console/batches.js';
import { loadDashboard } from '../../commands/console/dashboard.js';
import { loadGuardReport } from '../../commands/fraud-guard/report.js';
import { createDeliverySummaryCache } from '../../mcp/delivery-summary-cache.js';
import { tools } from '../../mcp/tools/index.js';
import type { Stack, Tenant } from './stack.js';

/** The MCP tools' inputs: every tool, with the ids of the workspace's batches where one is asked. */
function toolInputs(batchIds: readonly number[]): [string, Record<string, unknown>][] {
  return [
    ['list_recent_campaigns', { limit: 50 }],
    ['list_recent_quick_sends', { limit: 50 }],
    ['get_delivery_summary', { days: 7 }],
    ['get_delivery_summary', { days: 30 }],
    ['get_completed_campaign_summary', { days: 7 }],
    ['get_completed_campaign_summary', { days: 30 }],
    ['get_team_statistics', {}],
    ...batchIds.flatMap((id): [string, Record<string, unknown>][] => [
      ['get_quick_send_report', { quick_send_id: id }],
      ['get_campaign_report', { campaign_id: id }],
    ]),
  ];
}

async function mcpFigures(stack: Stack, tenant: Tenant, batchIds: readonly number[], now: Date) {
  const context = {
    sql: stack.sql,
    caller: { workspaceId: tenant.workspaceId, userId: tenant.userId },
    now: () => now,
    deliverySummaries: createDeliverySummaryCache(0),
  };
  const figures: unknown[] = [];
  for (const [name, input] of toolInputs(batchIds)) {
    const tool = tools.find((candidate) => candidate.name === name);
    if (!tool) throw new Error(`no MCP tool ${name}`);
    // A refusal (a Quick Send id asked as a campaign) is a figure too: it must not change.
    figures.push(
      await tool.run(context, input).then(
        (result) => ({ name, input, result }),
        (error: Error) => ({ name, input, refused: error.message }),
      ),
    );
  }
  return figures;
}

async function restLookups(stack: Stack, tenant: Tenant, batchIds: readonly number[]) {
  const lookups: unknown[] = [];
  for (const id of batchIds) {
    const response = await stack.app.inject({
      method: 'GET',
      url: `/api/v1/messages/${id}`,
      headers: { authorization: `Bearer ${tenant.token}` },
    });
    lookups.push({ id, status: response.statusCode, body: response.json() });
  }
  return lookups;
}

async function consoleFigures(
  stack: Stack,
  tenant: Tenant,
  batchIds: readonly number[],
  now: Date,
) {
  const deps = { sql: stack.sql };
  const batches = [];
  for (const id of batchIds) {
    batches.push({
      report: await loadBatchReport(deps, tenant.workspaceId, id),
      recipients: await loadBatchRecipients(deps, id, { afterSeq: 0, fullNumbers: false }),
    });
  }
  return {
    dashboard: await loadDashboard(deps, tenant.workspaceId, now),
    list: await listBatches(deps, tenant.workspaceId, {}, undefined),
    batches,
    guard: await loadGuardReport(deps, tenant.workspaceId, now),
  };
}

async function credits(stack: Stack, tenant: Tenant) {
  const [balance] = await stack.sql`
    select credit_balance from workspaces where id = ${tenant.workspaceId}`;
  const ledger = await stack.sql`
    select amount, reason, otp_request_id, created_at from credit_ledger
    where workspace_id = ${tenant.workspaceId} order by id`;
  return { balance, ledger };
}

export async function everyReport(
  stack: Stack,
  tenant: Tenant,
  batchIds: readonly number[],
  now: Date,
) {
  return {
    rest: await restLookups(stack, tenant, batchIds),
    console: await consoleFigures(stack, tenant, batchIds, now),
    mcp: await mcpFigures(stack, tenant, batchIds, now),
    credits: await credits(stack, tenant),
  };
}

/**
 * Every text-like column of every table (text, varchar, json, jsonb, arrays of them) whose value
 * holds one of `needles`: `table.column` with the rows' count.
 */
export async function columnsHolding(
  stack: Stack,
  needles: readonly string[],
): Promise<Record<string, number>> {
  const columns = await stack.sql<{ table: string; column: string }[]>`
    select c.table_name as table, c.column_name as column
    from information_schema.columns c
    join information_schema.tables t
      on t.table_schema = c.table_schema and t.table_name = c.table_name
    where c.table_schema = 'public' and t.table_type = 'BASE TABLE'
      and (c.data_type in ('text', 'character varying', 'character', 'json', 'jsonb')
        or (c.data_type = 'ARRAY' and c.udt_name in ('_text', '_varchar')))
    order by 1, 2`;
  const found: Record<string, number> = {};
  for (const { table, column } of columns) {
    const [row] = await stack.sql<{ count: number }[]>`
      select count(*)::int as count from ${stack.sql(table)}
      where ${stack.sql(column)}::text like any(${needles.map((needle) => `%${needle}%`)})`;
    if (row && row.count > 0) found[`${table}.${column}`] = row.count;
  }
  return found;
}
