import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { childEnvironment } from '../../config/child-environment.js';
import { isPortFree } from '../embedded/ports.js';
import { ClusterChild } from './child.js';
import { findOrBuildTemporalUi } from './temporal-build.js';

/**
 * The Temporal UI server of docker-compose.yml's temporal-ui, as a process of its own pointed at
 * the cluster's frontend. Optional: when it cannot be built or its port is taken, the cluster
 * runs without it and says so.
 */
export async function startTemporalUi(options: {
  dataDir: string;
  logDir: string;
  port: number;
  temporalAddress: string;
  namespace: string;
  log: (line: string) => void;
  register: (name: string, stop: () => Promise<void>) => void;
}): Promise<string | undefined> {
  const binary = await findOrBuildTemporalUi(options.log);
  if (!binary) return undefined;
  if (!(await isPortFree(options.port))) {
    options.log(
      `Port ${options.port} is in use: the Temporal UI is not started (TEMPORAL_UI_PORT).`,
    );
    return undefined;
  }
  const root = join(options.dataDir, 'temporal-ui');
  await mkdir(join(root, 'config'), { recursive: true });
  // JSON is YAML; the UI reads `<root>/config/<env>.yaml`.
  const config = {
    temporalGrpcAddress: options.temporalAddress,
    host: '127.0.0.1',
    port: options.port,
    enableUi: true,
    defaultNamespace: options.namespace,
    notifyOnNewVersion: false,
    refreshInterval: '1m',
    cors: { cookieInsecure: true, allowOrigins: [] },
    auth: { enabled: false },
  };
  await writeFile(join(root, 'config', 'cluster.yaml'), JSON.stringify(config, null, 2));
  const child = new ClusterChild(
    'temporal-ui',
    binary,
    ['--root', root, '--config', 'config', '--env', 'cluster', 'start'],
    { env: childEnvironment(), cwd: root, logFile: join(options.logDir, 'temporal-ui.log') },
  );
  child.start();
  options.register('Temporal UI', () => child.stop(5_000));
  const url = `http://127.0.0.1:${options.port}`;
  await child.until(
    'to serve',
    async () => {
      const response = await fetch(url, { signal: AbortSignal.timeout(2_000) });
      await response.arrayBuffer();
      return response.ok;
    },
    60_000,
  );
  return url;
}
