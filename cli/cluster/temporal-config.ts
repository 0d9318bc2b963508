import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The configuration file of one `temporal-server --service=<name>` process of the cluster
 * (written as JSON, which YAML parsers accept): persistence and visibility on Postgres, each
 * service on its own loopback ports, its Prometheus metrics included (`/metrics` on its
 * `metrics` port: the files differ only there), pprof off, and the dynamic config
 * docker-compose.yml mounts.
 */

export const TEMPORAL_SERVICES = ['history', 'matching', 'frontend', 'worker'] as const;
export type TemporalService = (typeof TEMPORAL_SERVICES)[number];

/** Fixed when the cluster's database is first set up; docker-compose.yml uses 512. */
export const NUM_HISTORY_SHARDS = 4;

const PROJECT_ROOT = fileURLToPath(new URL('../../', import.meta.url));
export const DYNAMIC_CONFIG_FILE = join(PROJECT_ROOT, 'deploy', 'temporal', 'dynamicconfig.yaml');

export interface ServicePorts {
  grpc: number;
  membership: number;
  /** Where the service serves its Prometheus metrics (`/metrics`). */
  metrics: number;
  /** The frontend's HTTP API only. */
  http?: number;
}

export interface TemporalDatabase {
  host: string;
  port: number;
  user: string;
  password: string;
  database: string;
  visibilityDatabase: string;
}

export function temporalServerConfig(options: {
  service: TemporalService;
  database: TemporalDatabase;
  ports: Record<TemporalService, ServicePorts>;
  logLevel: string;
}): object {
  const { database, ports } = options;
  const store = (databaseName: string, maxConns: number) => ({
    sql: {
      pluginName: 'postgres12',
      databaseName,
      connectAddr: `${database.host}:${database.port}`,
      connectProtocol: 'tcp',
      user: database.user,
      password: database.password,
      maxConns,
      maxIdleConns: maxConns,
      maxConnLifetime: '1h',
    },
  });
  const rpc = (service: TemporalService) => ({
    rpc: {
      grpcPort: ports[service].grpc,
      membershipPort: ports[service].membership,
      bindOnLocalHost: true,
      ...(ports[service].http ? { httpPort: ports[service].http } : {}),
    },
  });
  return {
    log: { stdout: true, level: options.logLevel },
    persistence: {
      defaultStore: 'postgres-default',
      visibilityStore: 'postgres-visibility',
      numHistoryShards: NUM_HISTORY_SHARDS,
      datastores: {
        'postgres-default': store(database.database, 20),
        'postgres-visibility': store(database.visibilityDatabase, 10),
      },
    },
    global: {
      membership: { maxJoinDuration: '30s', broadcastAddress: '127.0.0.1' },
      pprof: { port: 0 },
      metrics: {
        prometheus: {
          framework: 'opentelemetry',
          timerType: 'histogram',
          listenAddress: `127.0.0.1:${ports[options.service].metrics}`,
        },
      },
    },
    services: Object.fromEntries(TEMPORAL_SERVICES.map((service) => [service, rpc(service)])),
    clusterMetadata: {
      enableGlobalNamespace: false,
      failoverVersionIncrement: 10,
      masterClusterName: 'active',
      currentClusterName: 'active',
      clusterInformation: {
        active: {
          enabled: true,
          initialFailoverVersion: 1,
          rpcName: 'frontend',
          rpcAddress: `127.0.0.1:${ports.frontend.grpc}`,
        },
      },
    },
    dcRedirectionPolicy: { policy: 'noop' },
    dynamicConfigClient: { filepath: DYNAMIC_CONFIG_FILE, pollInterval: '10s' },
  };
}
