/**
 * CPU time spent by each part of a benchmark's stack, read from /proc: every descendant of this
 * process, grouped by what it is (herald api, herald worker, simulator, Postgres, Temporal, the
 * bench itself). Divided by the requests of a phase, it says which part a request costs most, and
 * so where a throughput limit on a CPU-bound machine comes from. Linux only; elsewhere empty.
 */
import { readdirSync, readFileSync } from 'node:fs';

/** Clock ticks per second of /proc's utime and stime (USER_HZ, 100 on Linux). */
const TICKS_PER_S = 100;

interface ProcessCpu {
  pid: number;
  parent: number;
  ms: number;
  part: string;
  command: string;
}

function partOf(command: string[], name: string): string {
  const line = command.join(' ');
  const herald = /bin\/herald\.js (api|worker|simulator)/.exec(line);
  if (herald) return `herald ${herald[1]}`;
  if (name.startsWith('postgres') || line.includes('postgres')) return 'postgres';
  if (line.includes('temporal-server')) {
    const service = /--service (\w+)/.exec(line)?.[1];
    return service ? `temporal ${service}` : 'temporal';
  }
  if (name === 'temporal' || line.includes('server start-dev')) return 'temporal dev server';
  if (line.includes('floor/worker')) return 'floor worker';
  return 'bench';
}

function readProcess(pid: number): ProcessCpu | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name is in parentheses and may hold spaces: fields follow its closing one.
    const close = stat.lastIndexOf(')');
    const name = stat.slice(stat.indexOf('(') + 1, close);
    const fields = stat.slice(close + 2).split(' ');
    const ticks = Number(fields[11]) + Number(fields[12]);
    const command = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
    return {
      pid,
      parent: Number(fields[1]),
      ms: (ticks * 1000) / TICKS_PER_S,
      part: partOf(command, name),
      command: command.join(' '),
    };
  } catch {
    return undefined; // exited meanwhile, or no /proc
  }
}

/**
 * CPU milliseconds used so far by this process and its descendants, by part, and by processes
 * whose command line names `dataDir` (Postgres detaches from its starter) and theirs.
 */
export function cpuByPart(dataDir: string): Record<string, number> {
  let pids: number[];
  try {
    pids = readdirSync('/proc')
      .filter((entry) => /^\d+$/.test(entry))
      .map(Number);
  } catch {
    return {};
  }
  const processes = pids.flatMap((pid) => readProcess(pid) ?? []);
  const children = new Map<number, ProcessCpu[]>();
  for (const each of processes) {
    children.set(each.parent, [...(children.get(each.parent) ?? []), each]);
  }
  const totals: Record<string, number> = {};
  const queue = processes
    .filter((each) => each.pid === process.pid || each.command.includes(dataDir))
    .map((each) => (each.pid === process.pid ? { ...each, part: 'bench' } : each));
  const seen = new Set<number>();
  while (queue.length > 0) {
    const each = queue.pop() as ProcessCpu;
    if (seen.has(each.pid)) continue;
    seen.add(each.pid);
    totals[each.part] = (totals[each.part] ?? 0) + each.ms;
    queue.push(...(children.get(each.pid) ?? []));
  }
  return totals;
}

/** CPU milliseconds per request of each part between two readings, largest first. */
export function cpuPerRequest(
  before: Record<string, number>,
  after: Record<string, number>,
  requests: number,
): Record<string, number> {
  const spent = Object.entries(after)
    .map(([part, ms]) => [part, (ms - (before[part] ?? 0)) / requests] as const)
    .filter(([, ms]) => ms > 0)
    .sort((a, b) => b[1] - a[1]);
  const total = spent.reduce((sum, [, ms]) => sum + ms, 0);
  return Object.fromEntries([
    ...spent.map(([part, ms]) => [part, Number(ms.toFixed(2))]),
    ['total', Number(total.toFixed(2))],
  ]);
}
