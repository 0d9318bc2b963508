/**
 * Temporal's Java time-skipping test server (io.temporal:temporal-test-server from Maven Central)
 * for @temporalio/testing. The SDK's own download of it needs the internet;
 * scripts/fetch-temporal-test-server.sh fetches the jars with Maven instead, and runs here when
 * they are missing.
 *
 * `createTimeSkipping({ server: { executable: { type: 'existing-path' } } })` runs the launcher
 * too, but gives a JVM only 5 s to listen, which a loaded 2-core machine does not always meet. So
 * the server is started here, with a minute to come up, and the environment (time-skipping
 * client, worker connection) is attached to it with the SDK's own factory.
 */
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { readdir } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import proto from '@temporalio/proto';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { freePort } from '../../cli/embedded/ports.js';
import { searchAttributes } from '../../workflows/definitions.js';
import { listening } from './processes.js';

const root = fileURLToPath(new URL('../../', import.meta.url));
const launcher = fileURLToPath(
  new URL('../time-skipping/temporal-test-server.sh', import.meta.url),
);
const IndexedValueType = proto.temporal.api.enums.v1.IndexedValueType;

async function jarsPresent(): Promise<boolean> {
  const files = await readdir(`${root}.tools/temporal-test-server`).catch(() => []);
  return files.some((file) => /^temporal-test-server-.*\.jar$/.test(file));
}

/** The SDK's factory behind createTimeSkipping, pointed at a server that is already running. */
const attach = (
  TestWorkflowEnvironment as unknown as {
    create(options: {
      server: { type: 'existing' };
      address: string;
      namespace: string;
      supportsTimeSkipping: true;
    }): Promise<TestWorkflowEnvironment>;
  }
).create.bind(TestWorkflowEnvironment);

export interface TimeSkipping {
  env: TestWorkflowEnvironment;
  /** Closes the environment's connections and stops the server. */
  stop(): Promise<void>;
}

export async function startTimeSkippingEnvironment(): Promise<TimeSkipping> {
  if (!(await jarsPresent())) {
    await promisify(execFile)(`${root}scripts/fetch-temporal-test-server.sh`, [], {
      cwd: root,
      timeout: 300_000,
    });
  }
  const port = await freePort();
  const server: ChildProcess = spawn(launcher, [String(port)], { stdio: 'ignore' });
  let exited = false;
  server.once('exit', () => {
    exited = true;
  });
  const stopServer = async () => {
    if (exited) return;
    const gone = new Promise((resolve) => server.once('exit', resolve));
    server.kill('SIGTERM');
    await gone;
  };
  const deadline = Date.now() + 60_000;
  while (!(await listening(port))) {
    if (exited || Date.now() > deadline) {
      await stopServer();
      throw new Error(`The Temporal test server (${launcher}) did not listen on ${port} in 60 s`);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  const env = await attach({
    server: { type: 'existing' },
    address: `127.0.0.1:${port}`,
    namespace: 'default',
    supportsTimeSkipping: true,
  });
  // The test server has no ListSearchAttributes; adding is enough.
  await env.connection.operatorService.addSearchAttributes({
    namespace: env.namespace ?? 'default',
    searchAttributes: Object.fromEntries(
      Object.values(searchAttributes).map((key) => [
        key.name,
        key.type === 'INT'
          ? IndexedValueType.INDEXED_VALUE_TYPE_INT
          : IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD,
      ]),
    ),
  });
  return {
    env,
    async stop() {
      await env.teardown();
      await stopServer();
    },
  };
}
