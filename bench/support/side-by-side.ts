/**
 * The figures of `npm run bench` side by side per Temporal shape: one row per figure, with the
 * aim it is held to (issue 16) and whether each shape met it.
 */

/** One shape's benchmark outputs by name (sms_1_worker, sms_2_workers, otp, mcp). */
export type Figures = Record<string, object>;

export interface Row {
  figure: string;
  aim: string | null;
  values: Record<string, number | null>;
  met: Record<string, boolean | null>;
}

interface LatencyStep {
  recipients?: number;
  concurrency: number;
  p50_ms: number;
  p99_ms: number;
  requests_per_s: number;
}

/** Reads a dotted path of a benchmark's JSON; null where it is missing. */
function at(figures: Figures, benchmark: string, path: string): unknown {
  let value: unknown = figures[benchmark];
  for (const key of path.split('.')) {
    if (value === null || typeof value !== 'object') return null;
    value = (value as Record<string, unknown>)[key];
  }
  return value ?? null;
}

const number = (value: unknown): number | null => (typeof value === 'number' ? value : null);

function acceptStep(figures: Figures, benchmark: string, recipients: number, concurrency: number) {
  const steps = at(figures, benchmark, 'accept_latency_202') as LatencyStep[] | null;
  return steps?.find((step) => step.recipients === recipients && step.concurrency === concurrency);
}

interface Definition {
  figure: string;
  read: (figures: Figures) => number | null;
  /** The aim as shown, and the benchmark's own verdict on it (its `aims`), which this reads. */
  aim?: { text: string; verdict: [benchmark: string, name: string] };
}

const DEFINITIONS: Definition[] = [
  {
    figure: 'SMS drain of 1,000 ÷ straight-to-simulator baseline (1 worker)',
    read: (f) => number(at(f, 'sms_1_worker', 'drain_1000.fraction_of_baseline')),
    aim: { text: '≥ 0.9', verdict: ['sms_1_worker', 'drain_at_least_0_9x_baseline'] },
  },
  {
    figure: 'SMS sustained, 20 × 1,000 ÷ baseline (1 worker)',
    read: (f) => number(at(f, 'sms_1_worker', 'sustained_20_campaigns.fraction_of_baseline')),
    aim: { text: '≥ 0.9', verdict: ['sms_1_worker', 'sustained_at_least_0_9x_baseline'] },
  },
  {
    figure: 'SMS drain of 1,000 ÷ baseline (2 workers)',
    read: (f) => number(at(f, 'sms_2_workers', 'drain_1000.fraction_of_baseline')),
  },
  {
    figure: 'SMS sustained messages/s, 1 worker',
    read: (f) => number(at(f, 'sms_1_worker', 'sustained_20_campaigns.messages_per_s')),
  },
  {
    figure: 'SMS sustained messages/s, 2 workers',
    read: (f) => number(at(f, 'sms_2_workers', 'sustained_20_campaigns.messages_per_s')),
  },
  {
    figure: '1-recipient send, concurrency 1, p50 ms',
    read: (f) => acceptStep(f, 'sms_1_worker', 1, 1)?.p50_ms ?? null,
  },
  {
    figure: '1-recipient send, concurrency 32, per s',
    read: (f) => acceptStep(f, 'sms_1_worker', 1, 32)?.requests_per_s ?? null,
  },
  {
    figure: 'Temporal floor: bare workflow start, concurrency 32, per s',
    read: (f) =>
      number(at(f, 'sms_1_worker', 'temporal_floor.workflow_start.concurrency_32.requests_per_s')),
  },
  {
    figure: '1-recipient send c32 ÷ bare workflow start c32',
    read: (f) => number(at(f, 'sms_1_worker', 'one_recipient_c32_over_workflow_start_floor_c32')),
    aim: {
      text: '≥ 0.6',
      verdict: ['sms_1_worker', 'one_recipient_c32_at_least_0_6x_workflow_start_floor'],
    },
  },
  {
    figure: '1,000-recipient send, concurrency 1, p50 ms',
    read: (f) => acceptStep(f, 'sms_1_worker', 1000, 1)?.p50_ms ?? null,
  },
  {
    figure: '1,000-recipient send, concurrency 32, p50 ms',
    read: (f) => acceptStep(f, 'sms_1_worker', 1000, 32)?.p50_ms ?? null,
  },
  {
    figure: '1,000-recipient send, concurrency 32, p99 ms',
    read: (f) => acceptStep(f, 'sms_1_worker', 1000, 32)?.p99_ms ?? null,
    aim: { text: '≤ 500', verdict: ['sms_1_worker', 'thousand_recipients_c32_p99_at_most_500_ms'] },
  },
  {
    figure: '1,000-recipient personalised send, concurrency 1, p50 ms',
    read: (f) =>
      number(at(f, 'sms_1_worker', 'personalized_accept_latency_202.personalized.p50_ms')),
  },
  {
    figure: '1,000-recipient send c1 p50, personalised ÷ plain (same rounds)',
    read: (f) =>
      number(at(f, 'sms_1_worker', 'personalized_accept_latency_202.p50_personalized_over_plain')),
  },
  {
    figure: 'OTP send, concurrency 1, p50 ms',
    read: (f) => number(at(f, 'otp', 'send.concurrency_1.p50_ms')),
  },
  {
    figure: 'Temporal floor: bare Update-with-Start, concurrency 1, p50 ms',
    read: (f) => number(at(f, 'otp', 'temporal_floor.update_with_start.concurrency_1.p50_ms')),
  },
  {
    figure: 'OTP send c1 p50 ÷ bare Update-with-Start c1 p50',
    read: (f) => number(at(f, 'otp', 'ratios.send_c1_p50_over_update_with_start_floor_c1_p50')),
    aim: { text: '≤ 1.5', verdict: ['otp', 'send_c1_p50_at_most_1_5x_update_with_start_floor'] },
  },
  {
    figure: 'OTP send, concurrency 32, per s',
    read: (f) => number(at(f, 'otp', 'send.concurrency_32.requests_per_s')),
    aim: { text: '≥ 200', verdict: ['otp', 'send_c32_at_least_200_per_s'] },
  },
  {
    figure: 'Temporal floor: bare Update-with-Start, concurrency 32, per s',
    read: (f) =>
      number(at(f, 'otp', 'temporal_floor.update_with_start.concurrency_32.requests_per_s')),
  },
  {
    figure: 'OTP send c32 ÷ bare Update-with-Start c32',
    read: (f) => number(at(f, 'otp', 'ratios.send_c32_over_update_with_start_floor_c32')),
    aim: { text: '≥ 0.5', verdict: ['otp', 'send_c32_at_least_0_5x_update_with_start_floor'] },
  },
  {
    figure: 'OTP send c32 guard on ÷ off',
    read: (f) => number(at(f, 'otp', 'ratios.otp_send_c32_guard_ratio')),
    aim: { text: '≥ 0.95', verdict: ['otp', 'send_c32_guard_on_at_least_0_95x_off'] },
  },
  {
    figure: 'OTP verify, concurrency 32, per s',
    read: (f) => number(at(f, 'otp', 'verify.concurrency_32.requests_per_s')),
  },
  {
    figure: 'Floor route (API key + one indexed read), concurrency 32, per s',
    read: (f) => number(at(f, 'otp', 'floor.concurrency_32.requests_per_s')),
  },
  {
    figure: 'Floor route c32, API rate limits on ÷ off',
    read: (f) => number(at(f, 'otp', 'ratios.floor_route_c32_rate_limit_ratio')),
  },
  {
    figure: 'OTP verify c32 ÷ floor route c32',
    read: (f) => number(at(f, 'otp', 'ratios.verify_c32_over_floor_route_c32')),
    aim: { text: '≥ 0.8', verdict: ['otp', 'verify_at_least_0_8x_floor_route'] },
  },
  {
    figure: 'MCP slowest tool, uncached, p50 ms (1,000,000 messages)',
    read: (f) => number(at(f, 'mcp', 'slowest_uncached_p50_ms')),
    aim: { text: '< 50', verdict: ['mcp', 'every_tool_under_50_ms_p50_uncached'] },
  },
];

export function figureRows(runs: Record<string, Figures>): Row[] {
  return DEFINITIONS.map((definition) => {
    const values: Row['values'] = {};
    const met: Row['met'] = {};
    for (const [shape, figures] of Object.entries(runs)) {
      const value = definition.read(figures);
      values[shape] = value;
      const verdict = definition.aim
        ? at(figures, definition.aim.verdict[0], `aims.${definition.aim.verdict[1]}`)
        : null;
      met[shape] = typeof verdict === 'boolean' ? verdict : null;
    }
    return { figure: definition.figure, aim: definition.aim?.text ?? null, values, met };
  });
}

export function markdownTable(rows: Row[], shapes: string[]): string {
  const cell = (row: Row, shape: string) => {
    const value = row.values[shape];
    if (value === null || value === undefined) return '–';
    const verdict = row.met[shape] === null ? '' : row.met[shape] ? ' ✓' : ' ✗';
    return `${value.toLocaleString('en-US')}${verdict}`;
  };
  const header = `| Figure | Aim | ${shapes.join(' | ')} |`;
  const rule = `|---|---|${shapes.map(() => '---:').join('|')}|`;
  const lines = rows.map(
    (row) =>
      `| ${row.figure} | ${row.aim ?? ''} | ${shapes.map((s) => cell(row, s)).join(' | ')} |`,
  );
  return [header, rule, ...lines].join('\n');
}
