/**
 * Whether a process may take traffic (`/readyz`): Postgres answers, Temporal answers, and the
 * database has every migration this code expects. Liveness (`/livez`) asks nothing of them: a
 * dependency's blip must make a process unready, never get it restarted.
 */
import type { Client } from '@temporalio/client';
import { ping, type Sql } from '../../db/client.js';
import { pendingMigrations } from '../../db/migrate.js';

const CHECK_TIMEOUT_MS = 2000;

export type ReadinessCheck = 'up' | 'down';

export interface Readiness {
  ready: boolean;
  checks: {
    postgres: ReadinessCheck;
    temporal: ReadinessCheck;
    migrations: 'current' | 'behind' | 'unknown';
  };
  /** Migrations the database lacks, when it answered. */
  pending: string[];
}

function withTimeout<T>(promise: Promise<T>): Promise<T> {
  return Promise.race([
    promise,
    new Promise<never>((_, reject) =>
      setTimeout(() => reject(new Error('timed out')), CHECK_TIMEOUT_MS).unref(),
    ),
  ]);
}

const answered = (promise: Promise<unknown>): Promise<ReadinessCheck> =>
  withTimeout(promise).then(
    () => 'up',
    () => 'down',
  );

export async function checkReadiness(deps: { sql: Sql; temporal: Client }): Promise<Readiness> {
  const [postgres, temporal, pending] = await Promise.all([
    answered(ping(deps.sql)),
    answered(
      deps.temporal.withDeadline(Date.now() + CHECK_TIMEOUT_MS, () =>
        deps.temporal.workflowService.getSystemInfo({}),
      ),
    ),
    withTimeout(pendingMigrations(deps.sql)).catch(() => undefined),
  ]);
  const migrations = pending === undefined ? 'unknown' : pending.length ? 'behind' : 'current';
  return {
    ready: postgres === 'up' && temporal === 'up' && migrations === 'current',
    checks: { postgres, temporal, migrations },
    pending: pending ?? [],
  };
}

/** Why a process is not ready, each reason as the probes name it: `temporal down`. */
export function unreadyReasons({ checks, pending }: Readiness): string[] {
  return [
    ...(['postgres', 'temporal'] as const)
      .filter((name) => checks[name] === 'down')
      .map((name) => `${name} down`),
    ...(checks.migrations === 'behind' ? [`migrations pending: ${pending.join(', ')}`] : []),
  ];
}
