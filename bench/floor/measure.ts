/**
 * Temporal's floor, measured on the server a benchmark runs against, in the same run: a bare
 * workflow start, and a bare Update-with-Start of a workflow whose update runs a local activity,
 * each at concurrency 1 and 32. Herald's figures are read as ratios of these.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { Client, Connection, WithStartWorkflowOperation } from '@temporalio/client';
import { cpuByPart, cpuPerRequest } from '../support/cpu.js';
import { type LatencySummary, measureLatency } from '../support/measure.js';
import { stopRole } from '../support/stack.js';
import type { emptyWorkflow, updatedWorkflow } from './workflows.js';
import { floorUpdate } from './workflows.js';

const TASK_QUEUE = 'bench-floor';
const CALL_DEADLINE_MS = 30_000;
const REQUESTS = { concurrency_1: 200, concurrency_32: 640 };

type Measured = Record<keyof typeof REQUESTS, LatencySummary> & {
  /** Where the CPU of a call at concurrency 32 went, by process (ms per call). */
  cpu_ms_per_call_c32: Record<string, number>;
};

export interface TemporalFloor {
  workflow_start: Measured;
  update_with_start: Measured;
}

async function startFloorWorker(address: string, namespace: string): Promise<ChildProcess> {
  const worker = spawn(
    process.execPath,
    [
      '--import',
      'tsx',
      fileURLToPath(new URL('./worker.ts', import.meta.url)),
      address,
      namespace,
      TASK_QUEUE,
    ],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  const lines = createInterface({ input: worker.stdout as NodeJS.ReadableStream });
  await new Promise<void>((resolve, reject) => {
    worker.once('exit', (code) => reject(new Error(`the floor worker exited (${code})`)));
    lines.on('line', (line) => line === 'ready' && resolve());
  });
  return worker;
}

/** The floor's worker and a client of the same server: one bare call of each kind. */
export interface Floor {
  /** Warms the worker's workflow cache and the connection. */
  warmUp(): Promise<void>;
  start(): Promise<void>;
  updateWithStart(): Promise<void>;
  close(): Promise<void>;
}

export async function openFloor(address: string, namespace: string): Promise<Floor> {
  const worker = await startFloorWorker(address, namespace);
  const connection = await Connection.connect({ address });
  const client = new Client({ connection, namespace });
  const floor: Floor = {
    async warmUp() {
      for (let i = 0; i < 20; i++) await floor.updateWithStart();
    },
    async start() {
      await client.workflow.start<typeof emptyWorkflow>('emptyWorkflow', {
        workflowId: `floor-start-${randomUUID()}`,
        taskQueue: TASK_QUEUE,
      });
    },
    async updateWithStart() {
      const operation = new WithStartWorkflowOperation<typeof updatedWorkflow>('updatedWorkflow', {
        workflowId: `floor-update-${randomUUID()}`,
        taskQueue: TASK_QUEUE,
        workflowIdConflictPolicy: 'USE_EXISTING',
      });
      // Bounded: if the floor's worker died, the run fails instead of waiting for it forever.
      const answer = await client.withDeadline(Date.now() + CALL_DEADLINE_MS, () =>
        client.workflow.executeUpdateWithStart(floorUpdate, { startWorkflowOperation: operation }),
      );
      if (answer !== 'ok') throw new Error(`the floor update answered ${answer}`);
    },
    async close() {
      await connection.close();
      await stopRole(worker);
    },
  };
  return floor;
}

/** `dataDir`: where the run's Postgres lives, so its CPU is counted too (a cluster's store). */
export async function measureTemporalFloor(
  address: string,
  namespace: string,
  dataDir = '/nonexistent',
): Promise<TemporalFloor> {
  const floor = await openFloor(address, namespace);
  try {
    await floor.warmUp();
    const measure = async (task: () => Promise<void>): Promise<Measured> => {
      const concurrency_1 = await measureLatency(REQUESTS.concurrency_1, 1, task);
      const cpuBefore = cpuByPart(dataDir);
      const concurrency_32 = await measureLatency(REQUESTS.concurrency_32, 32, task);
      const cpu = cpuPerRequest(cpuBefore, cpuByPart(dataDir), REQUESTS.concurrency_32);
      return { concurrency_1, concurrency_32, cpu_ms_per_call_c32: cpu };
    };
    return {
      workflow_start: await measure(floor.start),
      update_with_start: await measure(floor.updateWithStart),
    };
  } finally {
    await floor.close();
  }
}
