import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { type PeerRow, peerAims, peerFigures } from '../../bench/support/peer-figures.js';

/** A small results.json as ../shared/peer/bench.py writes it: two rounds, then the crash test. */
const RESULTS: PeerRow[] = [
  { test: 'idle', system: 'herald', seconds: 10, cpu_s: 0.4 },
  { test: 'idle', system: 'jasmin', seconds: 10, cpu_s: 0.2 },
  ...[1, 2, 3].flatMap((round) => [
    {
      test: 'throughput',
      system: 'herald',
      round,
      seconds: [20, 22, 21][round - 1],
      per_s: [500, 454.5, 476.2][round - 1],
      lost: 0,
      duplicates: 0,
      cpu_ms_per_msg: [2, 2.2, 2.1][round - 1],
    },
    {
      test: 'throughput',
      system: 'jasmin',
      round,
      seconds: [80, 90, 100][round - 1],
      per_s: [125, 111.1, 100][round - 1],
      lost: 0,
      duplicates: 0,
      cpu_ms_per_msg: [7, 6, 8][round - 1],
    },
  ]),
  { test: 'latency', system: 'herald', round: 1, p50_ms: 80, p99_ms: 280, http_p50_ms: 30 },
  { test: 'latency', system: 'jasmin', round: 1, p50_ms: 6, p99_ms: 20, http_p50_ms: 4 },
  { test: 'latency', system: 'herald', round: 2, p50_ms: 90, p99_ms: 300, http_p50_ms: 34 },
  { test: 'latency', system: 'jasmin', round: 2, p50_ms: 8, p99_ms: 24, http_p50_ms: 3 },
  // a round whose time bench.py could not take (nothing reached the SMSC): left out of the median
  { test: 'throttle', system: 'herald', round: 1, seconds: 2.4, lost: 0, duplicates: 0 },
  { test: 'throttle', system: 'jasmin', round: 1, seconds: null, lost: 200, duplicates: 0 },
  {
    test: 'crash',
    system: 'herald',
    not_received: 30,
    duplicates: 0,
    herald_view: { sent_count: 2900, failed_count: 70, queued_count: 0 },
  },
  { test: 'crash', system: 'jasmin', not_received: 0, duplicates: 0 },
];

function fromFile(rows: PeerRow[]): PeerRow[] {
  const path = join(mkdtempSync(join(tmpdir(), 'peer-figures-')), 'results.json');
  writeFileSync(path, JSON.stringify(rows, null, 1));
  return JSON.parse(readFileSync(path, 'utf8')) as PeerRow[];
}

describe('the peer benchmark figures from results.json', () => {
  const figures = peerFigures(fromFile(RESULTS));
  const byName = Object.fromEntries(figures.map((figure) => [figure.name, figure]));

  it('takes the median of each system’s rounds and Herald ÷ Jasmin, in the issue’s order', () => {
    expect(
      figures.map(({ name, herald, jasmin, herald_over_jasmin }) => [
        name,
        herald,
        jasmin,
        herald_over_jasmin,
      ]),
    ).toEqual([
      ['throughput_s', 21, 90, 0.23],
      ['throughput_msg_per_s', 476.2, 111.1, 4.29],
      ['throughput_lost', 0, 0, null],
      ['throughput_duplicated', 0, 0, null],
      ['cpu_ms_per_msg', 2.1, 7, 0.3],
      ['latency_p50_ms', 85, 7, 12.14],
      ['latency_p99_ms', 290, 22, 13.18],
      ['latency_http_p50_ms', 32, 3.5, 9.14],
      ['throttle_s', 2.4, null, null],
      ['throttle_lost', 0, 200, 0],
      ['throttle_duplicated', 0, 0, null],
      ['idle_cpu_s', 0.4, 0.2, 2],
      ['crash_lost', 30, 0, null],
      ['crash_duplicated', 0, 0, null],
      ['crash_unknown', 70, null, null],
    ]);
  });

  it('keeps each round’s value beside the median', () => {
    expect(byName.latency_p99_ms?.rounds).toEqual({ herald: [280, 300], jasmin: [20, 24] });
    expect(byName.throttle_s?.rounds).toEqual({ herald: [2.4], jasmin: [null] });
  });

  it('leaves out the figures of tests the run did not have', () => {
    expect(peerFigures(RESULTS.filter((row) => row.test === 'latency')).map((f) => f.name)).toEqual(
      ['latency_p50_ms', 'latency_p99_ms', 'latency_http_p50_ms'],
    );
  });

  it('holds the figures to the issue’s aims, null where not measured', () => {
    expect(peerAims(figures)).toEqual({
      latency_p50_at_most_2x_jasmin: false,
      latency_p99_at_most_3x_jasmin: false,
      throughput_at_least_4x_jasmin: true,
      cpu_per_message_at_most_0_35x_jasmin: true,
      throughput_none_lost: true,
      throughput_none_duplicated: true,
      crash_none_duplicated: true,
    });
    expect(peerAims(peerFigures(RESULTS.filter((row) => row.test === 'latency')))).toEqual({
      latency_p50_at_most_2x_jasmin: false,
      latency_p99_at_most_3x_jasmin: false,
      throughput_at_least_4x_jasmin: null,
      cpu_per_message_at_most_0_35x_jasmin: null,
      throughput_none_lost: null,
      throughput_none_duplicated: null,
      crash_none_duplicated: null,
    });
  });
});
