import { join, resolve } from 'node:path';
import { childEnvironment } from '../../config/child-environment.js';
import { parseEnv } from '../../config/env.js';
import { resolveSecret } from '../../config/secret.js';
import { Cluster } from '../cluster/cluster.js';
import { TEMPORAL_SERVER_VERSION } from '../cluster/temporal-build.js';
import { NUM_HISTORY_SHARDS } from '../cluster/temporal-config.js';
import { startTemporalUi } from '../cluster/temporal-ui.js';
import { Lifecycle } from '../lifecycle.js';
import { UsageError } from '../output.js';

const log = (line: string) => process.stderr.write(`${line}\n`);

const API_PROCESSES = 2;
const WORKER_PROCESSES = 2;

/**
 * `herald cluster`: the production shape on one machine (cli/cluster/cluster.ts). Its data
 * lives in `<HERALD_DATA_DIR>/cluster`, apart from `herald start`'s: a campaign queued on the
 * dev server would never run on the cluster. The apis listen on PORT and PORT+1, the Temporal
 * frontend on TEMPORAL_DEV_PORT, the simulator on SIMULATOR_PORT.
 */
export async function cluster(): Promise<void> {
  const env = parseEnv();
  if (env.TEMPORAL_ADDRESS) {
    throw new UsageError(
      '`herald cluster` runs its own Temporal cluster; unset TEMPORAL_ADDRESS (or use `herald api` ' +
        'and `herald worker` against that server).',
    );
  }
  const dataDir = resolve(env.HERALD_DATA_DIR, 'cluster');
  const secret = await resolveSecret({ ...env, HERALD_DATA_DIR: dataDir });
  const lifecycle = new Lifecycle(log);
  lifecycle.handleSignals();
  const started = Date.now();
  try {
    const running = await Cluster.start({
      dataDir,
      ...(env.DATABASE_URL ? { databaseUrl: env.DATABASE_URL } : {}),
      secret,
      namespace: env.TEMPORAL_NAMESPACE,
      apiPorts: Array.from({ length: API_PROCESSES }, (_, i) => env.PORT + i),
      workers: WORKER_PROCESSES,
      simulatorPort: env.SIMULATOR_PORT,
      temporalPort: env.TEMPORAL_DEV_PORT,
      heraldEnv: childEnvironment({ HERALD_DATA_DIR: dataDir }),
      log,
      register: (name, stop) => lifecycle.add(name, stop),
    });
    if (lifecycle.isStopping) return;
    const uiUrl = await startTemporalUi({
      dataDir,
      logDir: running.logDir,
      port: env.TEMPORAL_UI_PORT,
      temporalAddress: running.temporal.address,
      namespace: env.TEMPORAL_NAMESPACE,
      log,
      register: (name, stop) => lifecycle.add(name, stop),
    });
    if (lifecycle.isStopping) return;
    const temporalPids = [...running.temporal.services]
      .map(([service, child]) => `${service} ${child.pid}`)
      .join(', ');
    const heraldPids = [...running.heraldProcesses.values()]
      .map((child) => `${child.name} ${child.pid}`)
      .join(', ');
    log(
      [
        '',
        `Herald cluster is running (started in ${((Date.now() - started) / 1000).toFixed(1)} s)`,
        ...running.apiUrls.map((url, i) => `  API ${i + 1}        ${url}  (health: ${url}/health)`),
        `  Simulator    ${running.simulatorUrl}  (inbox: ${running.simulatorUrl}/v1/inbox)`,
        `  Temporal     ${running.temporal.address} (namespace ${env.TEMPORAL_NAMESPACE}; server ${TEMPORAL_SERVER_VERSION}, ${NUM_HISTORY_SHARDS} history shards)`,
        `  Temporal UI  ${uiUrl ?? 'not running (see above)'}`,
        `  Metrics      Temporal ${Object.entries(running.temporal.metricsUrls)
          .map(([service, url]) => `${service} ${url}`)
          .join(', ')}`,
        env.DATABASE_URL
          ? '  Postgres     DATABASE_URL (databases temporal and temporal_visibility beside it)'
          : `  Postgres     embedded in ${join(dataDir, 'postgres')}`,
        `  Processes    Temporal: ${temporalPids}`,
        `               Herald: ${heraldPids}`,
        `  Logs         ${running.logDir}`,
        'Press Ctrl-C to stop.',
      ].join('\n'),
    );
  } catch (error) {
    if (lifecycle.isStopping) return;
    await lifecycle.shutdown();
    throw error;
  }
}
