/**
 * The figures of `../shared/peer/`'s benchmark (Herald beside the Jasmin SMS Gateway) from the
 * rows its bench.py writes to results.json and results-crash.json: per figure the median of each
 * system's rounds, as its summarize.py takes them (rounds without the value left out), and the
 * ratio Herald ÷ Jasmin.
 */
import { median, round } from './measure.js';

/** One row of bench.py's results: one test of one system in one round. */
export interface PeerRow {
  test: string;
  system: string;
  round?: number;
  [field: string]: unknown;
}

interface Definition {
  name: string;
  label: string;
  test: string;
  /** A field of the row, or a dotted path into it (herald_view.failed_count). */
  field: string;
}

const DEFINITIONS: Definition[] = [
  {
    name: 'throughput_s',
    label: '10,000 messages, first request → last submit_sm at the SMSC, s',
    test: 'throughput',
    field: 'seconds',
  },
  {
    name: 'throughput_msg_per_s',
    label: 'the same, messages per second',
    test: 'throughput',
    field: 'per_s',
  },
  {
    name: 'throughput_lost',
    label: 'the same, lost',
    test: 'throughput',
    field: 'lost',
  },
  {
    name: 'throughput_duplicated',
    label: 'the same, duplicated',
    test: 'throughput',
    field: 'duplicates',
  },
  {
    name: 'cpu_ms_per_msg',
    label: 'CPU per message, every process of each system, ms',
    test: 'throughput',
    field: 'cpu_ms_per_msg',
  },
  {
    name: 'latency_p50_ms',
    label: 'one message on an idle system, request → submit_sm, p50 ms',
    test: 'latency',
    field: 'p50_ms',
  },
  {
    name: 'latency_p99_ms',
    label: 'the same, p99 ms',
    test: 'latency',
    field: 'p99_ms',
  },
  {
    name: 'latency_http_p50_ms',
    label: 'the HTTP answer of that request, p50 ms',
    test: 'latency',
    field: 'http_p50_ms',
  },
  {
    name: 'throttle_s',
    label: '200 messages, 1 in 40 answered ESME_RTHROTTLED, s to the last',
    test: 'throttle',
    field: 'seconds',
  },
  {
    name: 'throttle_lost',
    label: 'the same, lost',
    test: 'throttle',
    field: 'lost',
  },
  {
    name: 'throttle_duplicated',
    label: 'the same, duplicated',
    test: 'throttle',
    field: 'duplicates',
  },
  {
    name: 'idle_cpu_s',
    label: 'CPU s in 10 s idle',
    test: 'idle',
    field: 'cpu_s',
  },
  {
    name: 'crash_lost',
    label: 'kill -9 at 30 % of 3,000: accepted but never reached the SMSC',
    test: 'crash',
    field: 'not_received',
  },
  {
    name: 'crash_duplicated',
    label: 'the same, duplicated at the SMSC',
    test: 'crash',
    field: 'duplicates',
  },
  {
    name: 'crash_unknown',
    label: "the same, failed by the system's own account (Herald: outcome unknown)",
    test: 'crash',
    field: 'herald_view.failed_count',
  },
];

export interface PeerFigure {
  name: string;
  label: string;
  /** Median of Herald's rounds; null when no round has the value. */
  herald: number | null;
  jasmin: number | null;
  /** Herald's median ÷ Jasmin's; null when either is missing or Jasmin's is 0. */
  herald_over_jasmin: number | null;
  /** Each round's value, in round order. */
  rounds: { herald: (number | null)[]; jasmin: (number | null)[] };
}

function valueAt(row: PeerRow, path: string): number | null {
  let value: unknown = row;
  for (const key of path.split('.')) {
    if (value === null || typeof value !== 'object') return null;
    value = (value as Record<string, unknown>)[key];
  }
  return typeof value === 'number' ? value : null;
}

function medianOf(values: (number | null)[]): number | null {
  const present = values.filter((value): value is number => value !== null);
  return present.length ? round(median(present), 2) : null;
}

/** Every figure that the rows have for at least one system, in the table order. */
export function peerFigures(rows: PeerRow[]): PeerFigure[] {
  const figures: PeerFigure[] = [];
  for (const definition of DEFINITIONS) {
    const ofTest = rows.filter((row) => row.test === definition.test);
    if (!ofTest.length) continue;
    const roundsOf = (system: string) =>
      ofTest.filter((row) => row.system === system).map((row) => valueAt(row, definition.field));
    const rounds = { herald: roundsOf('herald'), jasmin: roundsOf('jasmin') };
    const herald = medianOf(rounds.herald);
    const jasmin = medianOf(rounds.jasmin);
    if (herald === null && jasmin === null) continue;
    figures.push({
      name: definition.name,
      label: definition.label,
      herald,
      jasmin,
      herald_over_jasmin: herald !== null && jasmin ? round(herald / jasmin, 2) : null,
      rounds,
    });
  }
  return figures;
}

/** The "Done when" for the peer figures; null where the run did not measure it. */
export function peerAims(figures: PeerFigure[]) {
  const figure = (name: string) => figures.find((candidate) => candidate.name === name);
  const ratioAtMost = (name: string, limit: number) => {
    const ratio = figure(name)?.herald_over_jasmin;
    return ratio === null || ratio === undefined ? null : ratio <= limit;
  };
  const heraldZero = (name: string) => {
    const rounds = figure(name)?.rounds.herald;
    return rounds?.length ? rounds.every((value) => value === 0) : null;
  };
  const rate = figure('throughput_msg_per_s')?.herald_over_jasmin;
  return {
    latency_p50_at_most_2x_jasmin: ratioAtMost('latency_p50_ms', 2),
    latency_p99_at_most_3x_jasmin: ratioAtMost('latency_p99_ms', 3),
    throughput_at_least_4x_jasmin: rate === null || rate === undefined ? null : rate >= 4,
    cpu_per_message_at_most_0_35x_jasmin: ratioAtMost('cpu_ms_per_msg', 0.35),
    throughput_none_lost: heraldZero('throughput_lost'),
    throughput_none_duplicated: heraldZero('throughput_duplicated'),
    crash_none_duplicated: heraldZero('crash_duplicated'),
  };
}
