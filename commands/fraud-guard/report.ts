/** The fraud guard's refusals per rule over the last 30 days: the console's chart and totals. */
import { type GuardRule, listGuardRefusals } from '../../db/fraud-guard.js';
import type { CommandDeps } from '../deps.js';

type Deps = Pick<CommandDeps, 'sql'>;

const DAY_MS = 86_400_000;
const DAYS = 30;

/** Every rule the guard counts, in the order the chart and table show them. */
export const GUARD_RULES: readonly { rule: GuardRule; label: string }[] = [
  { rule: 'otp_per_recipient', label: 'OTP per recipient' },
  { rule: 'otp_country', label: 'OTP country' },
  { rule: 'sms_country', label: 'SMS country' },
  { rule: 'blocked_prefix', label: 'Blocked prefix' },
  { rule: 'range_breaker', label: 'Range breaker' },
  { rule: 'daily_cap', label: 'Daily cap' },
  { rule: 'key_rate', label: 'API key rate' },
  { rule: 'workspace_rate', label: 'Workspace rate' },
];

export interface GuardReport {
  /** Every UTC day of the last 30, today last: epoch seconds, as the chart takes them. */
  days: number[];
  /** Each rule's refusals on each of those days (zeros included), and their total. */
  rules: { rule: GuardRule; label: string; daily: number[]; total: number }[];
}

export async function loadGuardReport(
  deps: Deps,
  workspaceId: number,
  now = new Date(),
): Promise<GuardReport> {
  const firstDay = Math.floor(now.getTime() / DAY_MS) * DAY_MS - (DAYS - 1) * DAY_MS;
  const rows = await listGuardRefusals(deps.sql, workspaceId, DAYS);
  const days = Array.from({ length: DAYS }, (_, index) => (firstDay + index * DAY_MS) / 1000);
  const rules = GUARD_RULES.map(({ rule, label }) => ({
    rule,
    label,
    daily: days.map(() => 0),
    total: 0,
  }));
  for (const row of rows) {
    const index = (Date.parse(`${row.day}T00:00:00Z`) - firstDay) / DAY_MS;
    const counted = rules.find((candidate) => candidate.rule === row.rule);
    // A day outside the chart (Postgres's clock a midnight away from ours) is left out.
    if (!counted || index < 0 || index >= DAYS) continue;
    counted.daily[index] = row.refusals;
    counted.total += row.refusals;
  }
  return { days, rules };
}
