import proto from '@temporalio/proto';
import type { FastifyInstance } from 'fastify';
import { checkReadiness, unreadyReasons } from '../../commands/operations/readiness.js';
import { ping } from '../../db/client.js';
import { TASK_QUEUE } from '../../workflows/definitions.js';
import type { ApiDeps } from '../deps.js';

const CHECK_TIMEOUT_MS = 2000;
/** A worker long-polls for up to about a minute; a poller last seen within this is alive. */
const POLLER_FRESHNESS_MS = 90_000;

type Check = 'up' | 'down';

function withTimeout<T>(promise: Promise<T>): Promise<T> {
  return Promise.race([
    promise,
    new Promise<never>((_, reject) =>
      setTimeout(() => reject(new Error('timed out')), CHECK_TIMEOUT_MS).unref(),
    ),
  ]);
}

async function postgresCheck(deps: ApiDeps): Promise<Check> {
  try {
    await withTimeout(ping(deps.sql));
    return 'up';
  } catch {
    return 'down';
  }
}

/** Temporal reachable, and a worker polled Herald's task queue recently. */
async function temporalChecks(deps: ApiDeps): Promise<{ temporal: Check; worker: Check }> {
  try {
    const { pollers } = await deps.temporal.withDeadline(Date.now() + CHECK_TIMEOUT_MS, () =>
      deps.temporal.workflowService.describeTaskQueue({
        namespace: deps.env.TEMPORAL_NAMESPACE,
        taskQueue: { name: TASK_QUEUE },
        taskQueueType: proto.temporal.api.enums.v1.TaskQueueType.TASK_QUEUE_TYPE_WORKFLOW,
      }),
    );
    const freshSince = Date.now() - POLLER_FRESHNESS_MS;
    const polling = (pollers ?? []).some((poller) => {
      const seconds = Number(poller.lastAccessTime?.seconds ?? 0);
      return seconds * 1000 >= freshSince;
    });
    return { temporal: 'up', worker: polling ? 'up' : 'down' };
  } catch {
    return { temporal: 'down', worker: 'down' };
  }
}

/**
 * The probes: `/livez` answers while the process serves (a liveness probe restarts only a stuck
 * process), `/readyz` while it can do its work (a readiness probe takes it out of rotation while
 * Postgres or Temporal is away, or before its migrations ran). `/health` stays as it was.
 */
export async function healthRoutes(app: FastifyInstance, { deps }: { deps: ApiDeps }) {
  app.get('/livez', async () => ({ status: 'ok' }));

  app.get('/readyz', async (_request, reply) => {
    const readiness = await checkReadiness(deps);
    const { checks } = readiness;
    if (readiness.ready) return { status: 'ready', checks };
    return reply.code(503).send({
      status: 'not_ready',
      message: `Not ready: ${unreadyReasons(readiness).join('; ')}.`,
      checks,
    });
  });

  app.get('/health', async (_request, reply) => {
    const [postgres, { temporal, worker }] = await Promise.all([
      postgresCheck(deps),
      temporalChecks(deps),
    ]);
    const checks = { postgres, temporal, worker };
    const down = Object.entries(checks).filter(([, state]) => state === 'down');
    if (down.length === 0) return { status: 'ok', checks };
    return reply.code(503).send({
      status: 'unavailable',
      message: `Unavailable: ${down.map(([name]) => name).join(', ')} down.`,
      checks,
    });
  });
}
