/** What a chaos scenario is, and the invariants it reports. */

export interface ScenarioOptions {
  /** The CI variant: smaller, one fault. */
  short: boolean;
  /** Leave each run's data directory (logs, Postgres, Temporal's database) behind. */
  keep: boolean;
  run: number;
}

/** One invariant of the "Done when" list, with the value seen. */
export interface Check {
  name: string;
  ok: boolean;
  value: unknown;
  goal: string;
}

export function check(name: string, value: unknown, ok: boolean, goal: string): Check {
  return { name, ok, value, goal };
}

export interface ScenarioResult {
  figures: Record<string, unknown>;
  checks: Check[];
}

export interface Scenario {
  name: string;
  /** Part of `npm run chaos:short`. */
  short: boolean;
  /** A drill of its own (`npm run drill:backup`): run only when named with `--only`. */
  drill?: boolean;
  run(options: ScenarioOptions): Promise<ScenarioResult>;
}
