import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { parse, parseAllDocuments, stringify } from 'yaml';
import { envSchema, parseEnv } from '../../config/env.js';

/*
 * The Helm chart (deploy/helm/herald), rendered by a real helm and checked by kubeconform against
 * Kubernetes' own JSON schemas and the ServiceMonitor CRD's, all installed offline into .tools/helm
 * by scripts/install-helm.sh (run by `npm test`'s pretest).
 */

const root = fileURLToPath(new URL('../../', import.meta.url));
const chart = `${root}deploy/helm/herald`;
const tools = `${root}.tools/helm`;
const helm = `${tools}/bin/helm`;
const kubeconform = `${tools}/bin/kubeconform`;
const MINIMAL_VALUES = `${chart}/ci/minimal-values.yaml`;
const PRODUCTION_VALUES = `${chart}/ci/production-values.yaml`;
/** The oldest Kubernetes the chart supports (Chart.yaml kubeVersion) and the newest schemas. */
const KUBERNETES_VERSIONS = ['1.25.0', '1.37.0'];
/** What the operator's own Secrets of ci/production-values.yaml hold, as `name/key`. */
const EXISTING_SECRETS: Record<string, string> = {
  'herald-database/url': 'postgres://herald:sample@postgres.databases.svc:5432/herald',
  // A key ring, newest first: passed through as one opaque string.
  'herald-secret/key-ring':
    'newest-key-0123456789abcdefghijklmnopqrstuv,older-key-0123456789abcdefghijklmnopqrstuv',
};

interface EnvVar {
  name: string;
  value?: string;
  valueFrom?: { secretKeyRef?: { name: string; key: string } };
}
interface Probe {
  httpGet?: { path: string; port: string | number };
  periodSeconds?: number;
  failureThreshold?: number;
}
interface Container {
  name: string;
  command?: string[];
  env?: EnvVar[];
  ports?: { name: string; containerPort: number }[];
  startupProbe?: Probe;
  livenessProbe?: Probe;
  readinessProbe?: Probe;
  securityContext?: Record<string, unknown>;
  volumeMounts?: { name: string; mountPath: string }[];
}
interface PodSpec {
  containers: Container[];
  securityContext?: Record<string, unknown>;
  volumes?: { name: string; emptyDir?: object }[];
  automountServiceAccountToken?: boolean;
}
interface Manifest {
  apiVersion: string;
  kind: string;
  metadata: { name: string; labels?: Record<string, string>; annotations?: Record<string, string> };
  spec?: {
    template?: { spec: PodSpec };
    selector?: {
      matchLabels?: Record<string, string>;
      matchExpressions?: { key: string; operator: string; values: string[] }[];
    };
    ports?: { name: string; port: number; targetPort: string | number }[];
    endpoints?: { port: string; path: string }[];
    scaleTargetRef?: { kind: string; name: string };
    rules?: { http: { paths: { backend: { service: { name: string; port: object } } }[] } }[];
  };
  stringData?: Record<string, string>;
}
interface Rendered {
  yaml: string;
  manifests: Manifest[];
}

function run(command: string, args: string[], input?: string) {
  const result = spawnSync(command, args, { encoding: 'utf8', input, cwd: root });
  if (result.error) throw result.error;
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

function helmTemplate(args: string[]) {
  return run(helm, ['template', 'herald', chart, '--namespace', 'herald', ...args]);
}

/** What `helm template` prints when a template calls `required` or `fail` with `message`. */
function templateError(message: string): RegExp {
  const escaped = message.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  return new RegExp(
    `^Error: execution error at \\(herald/templates/[\\w-]+\\.yaml:\\d+:\\d+\\): ${escaped}\n\nUse --debug flag to render out invalid YAML\n$`,
  );
}

function render(valuesFile: string, extraArgs: string[] = []): Rendered {
  const result = helmTemplate(['--values', valuesFile, ...extraArgs]);
  if (result.status !== 0) throw new Error(`helm template failed:\n${result.stderr}`);
  const manifests = parseAllDocuments(result.stdout)
    .map((document) => document.toJS() as Manifest | null)
    .filter((manifest): manifest is Manifest => manifest !== null);
  return { yaml: result.stdout, manifests };
}

function find(rendered: Rendered, kind: string, name: string): Manifest {
  const found = rendered.manifests.find((m) => m.kind === kind && m.metadata.name === name);
  if (!found) throw new Error(`no ${kind} ${name} in the rendered chart`);
  return found;
}

function podSpec(rendered: Rendered, kind: string, name: string): PodSpec {
  const spec = find(rendered, kind, name).spec?.template?.spec;
  if (!spec) throw new Error(`${kind} ${name} has no pod template`);
  return spec;
}

function container(rendered: Rendered, kind: string, name: string): Container {
  const [only, ...others] = podSpec(rendered, kind, name).containers;
  if (!only || others.length > 0) throw new Error(`${kind} ${name} must run one container`);
  return only;
}

/** A container's environment as the process sees it, Secrets read from the render or the operator's. */
function environmentOf(rendered: Rendered, of: Container): Record<string, string> {
  return Object.fromEntries(
    (of.env ?? []).map((variable) => {
      const ref = variable.valueFrom?.secretKeyRef;
      if (!ref) return [variable.name, variable.value ?? ''];
      const chartSecret = rendered.manifests.find(
        (m) => m.kind === 'Secret' && m.metadata.name === ref.name,
      );
      const value =
        chartSecret?.stringData?.[ref.key] ?? EXISTING_SECRETS[`${ref.name}/${ref.key}`];
      if (value === undefined)
        throw new Error(`${variable.name}: no Secret ${ref.name}/${ref.key}`);
      return [variable.name, value];
    }),
  );
}

const workloads = [
  ['Deployment', 'herald-api'],
  ['Deployment', 'herald-worker'],
  ['Job', 'herald-migrate'],
] as const;

/** The `command` docker-compose.yml runs each role with. */
function composeCommand(service: string): string[] {
  const compose = parse(readFileSync(`${root}docker-compose.yml`, 'utf8'), { merge: true }) as {
    services: Record<string, { command?: string[] }>;
  };
  return compose.services[service]?.command ?? [];
}

function portNumber(of: Container, name: string): number | undefined {
  return of.ports?.find((port) => port.name === name)?.containerPort;
}

/** kubeconform -strict over `yaml`, on the schemas scripts/install-helm.sh installed. */
function kubeconformReport(yaml: string, kubernetesVersion: string) {
  const result = run(
    kubeconform,
    [
      '-strict',
      '-summary',
      '-output',
      'json',
      '-kubernetes-version',
      kubernetesVersion,
      '-schema-location',
      `${tools}/schemas/{{ .NormalizedKubernetesVersion }}-local{{ .StrictSuffix }}/{{ .ResourceKind }}{{ .KindSuffix }}.json`,
      '-schema-location',
      `${tools}/schemas/{{ .Group }}/{{ .ResourceKind }}_{{ .ResourceAPIVersion }}.json`,
      '-',
    ],
    yaml,
  );
  const report = JSON.parse(result.stdout) as { resources: unknown[]; summary: object };
  return { status: result.status, report };
}

let minimal: Rendered;
let production: Rendered;

beforeAll(() => {
  for (const tool of [helm, kubeconform, `${tools}/schemas`]) {
    if (!existsSync(tool)) throw new Error(`${tool} is missing: run scripts/install-helm.sh`);
  }
  minimal = render(MINIMAL_VALUES);
  production = render(PRODUCTION_VALUES);
});

describe('Helm chart deploy/helm/herald', () => {
  it('passes helm lint --strict with the minimal and the production values', () => {
    for (const values of [MINIMAL_VALUES, PRODUCTION_VALUES]) {
      const result = run(helm, ['lint', '--strict', chart, '--values', values]);
      expect(result.stderr, values).toBe('');
      expect(result.status, result.stdout).toBe(0);
      expect(result.stdout).toContain('1 chart(s) linted, 0 chart(s) failed');
    }
  });

  it('renders the roles, the migrate hook, autoscalers, disruption budgets, services', () => {
    const kinds = (rendered: Rendered) =>
      rendered.manifests.map((m) => `${m.kind} ${m.metadata.name}`).sort();
    expect(kinds(minimal)).toEqual([
      'Deployment herald-api',
      'Deployment herald-worker',
      'HorizontalPodAutoscaler herald-api',
      'HorizontalPodAutoscaler herald-worker',
      'Job herald-migrate',
      'PodDisruptionBudget herald-api',
      'PodDisruptionBudget herald-worker',
      'Secret herald-secrets',
      'Service herald-api',
      'Service herald-worker',
    ]);
    // The operator's Secrets, no chart Secret; a fixed worker count, so no worker autoscaler.
    expect(kinds(production)).toEqual([
      'Deployment herald-api',
      'Deployment herald-worker',
      'HorizontalPodAutoscaler herald-api',
      'Ingress herald',
      'Job herald-migrate',
      'PodDisruptionBudget herald-api',
      'PodDisruptionBudget herald-worker',
      'Service herald-api',
      'Service herald-worker',
      'ServiceMonitor herald',
    ]);
    const apiScaler = find(minimal, 'HorizontalPodAutoscaler', 'herald-api');
    expect(apiScaler.apiVersion).toBe('autoscaling/v2');
    expect(apiScaler.spec?.scaleTargetRef).toMatchObject({
      kind: 'Deployment',
      name: 'herald-api',
    });
  });

  it('passes kubeconform -strict on the oldest and newest Kubernetes, the ServiceMonitor included', () => {
    const both = `${minimal.yaml}\n---\n${production.yaml}`;
    for (const version of KUBERNETES_VERSIONS) {
      const { status, report } = kubeconformReport(both, version);
      expect(report.resources, `Kubernetes ${version}`).toEqual([]);
      expect(report.summary).toEqual({
        valid: minimal.manifests.length + production.manifests.length,
        invalid: 0,
        errors: 0,
        skipped: 0,
      });
      expect(status).toBe(0);
    }
  }, 60_000);

  it('finds a misspelt field with kubeconform, in a Deployment and in the ServiceMonitor', () => {
    const tampered = structuredClone(production.manifests);
    const deployment = tampered.find((m) => m.kind === 'Deployment');
    const monitor = tampered.find((m) => m.kind === 'ServiceMonitor');
    Object.assign(deployment?.spec?.template?.spec.containers[0] ?? {}, { readynessProbe: {} });
    Object.assign(monitor?.spec?.endpoints?.[0] ?? {}, { intervall: '30s' });
    const yaml = tampered.map((manifest) => stringify(manifest)).join('---\n');
    const { status, report } = kubeconformReport(yaml, KUBERNETES_VERSIONS[0] ?? '');
    expect(status).toBe(1);
    expect(report.summary).toEqual({
      valid: tampered.length - 2,
      invalid: 2,
      errors: 0,
      skipped: 0,
    });
  }, 60_000);

  it('gives every container only variables of the config contract, each valid (config/env.ts)', () => {
    for (const rendered of [minimal, production]) {
      for (const [kind, name] of workloads) {
        const env = environmentOf(rendered, container(rendered, kind, name));
        expect(
          Object.keys(env).filter((key) => !(key in envSchema.shape)),
          name,
        ).toEqual([]);
        expect(() => parseEnv(env), name).not.toThrow();
        expect(env.NODE_ENV, name).toBe('production');
      }
      for (const name of ['herald-api', 'herald-worker']) {
        const env = parseEnv(environmentOf(rendered, container(rendered, 'Deployment', name)));
        expect(env.HERALD_SECRET, name).toBeDefined();
        expect(env.DATABASE_URL, name).toBeDefined();
        expect(env.TEMPORAL_ADDRESS, name).toBeDefined();
        expect(env.PUBLIC_URL, name).toBeDefined();
        // Unset, `own` would point at a simulator on localhost that no pod runs.
        expect(env.OWN_PROVIDER_URL, name).toBeDefined();
      }
    }
    const workerEnv = environmentOf(
      production,
      container(production, 'Deployment', 'herald-worker'),
    );
    expect(workerEnv).toMatchObject({
      HERALD_SECRET: EXISTING_SECRETS['herald-secret/key-ring'],
      TEMPORAL_ADDRESS: 'temporal-frontend.temporal.svc.cluster.local:7233',
      TEMPORAL_NAMESPACE: 'herald-production',
      OWN_PROVIDER_MESSAGES_PER_SECOND: '400',
      MCP_ENABLED: 'true',
    });
    // The migrate Job gets DATABASE_URL and nothing secret beyond it.
    expect(
      Object.keys(environmentOf(minimal, container(minimal, 'Job', 'herald-migrate'))),
    ).toEqual(['NODE_ENV', 'DATABASE_URL']);
  });

  it('runs the roles as docker-compose.yml does, probed on the ports their environment sets', () => {
    const api = container(minimal, 'Deployment', 'herald-api');
    const worker = container(minimal, 'Deployment', 'herald-worker');
    expect(api.command).toEqual(composeCommand('herald-api'));
    expect(worker.command).toEqual(composeCommand('herald-worker'));
    expect(container(minimal, 'Job', 'herald-migrate').command).toEqual(
      composeCommand('herald-migrate'),
    );

    const apiEnv = parseEnv(environmentOf(minimal, api));
    const workerEnv = parseEnv(environmentOf(minimal, worker));
    expect([apiEnv.HOST, workerEnv.HOST]).toEqual(['0.0.0.0', '0.0.0.0']);
    expect(portNumber(api, 'http')).toBe(3000);
    expect(apiEnv.PORT).toBe(3000);
    expect(portNumber(worker, 'health')).toBe(3001);
    expect(workerEnv.WORKER_HEALTH_PORT).toBe(3001);
    for (const [of, env] of [
      [api, environmentOf(minimal, api)],
      [worker, environmentOf(minimal, worker)],
    ] as const) {
      expect(portNumber(of, 'metrics'), of.name).toBe(9464);
      expect(env.METRICS_PORT, of.name).toBe('9464');
    }

    const probes = (of: Container) =>
      [of.startupProbe, of.livenessProbe, of.readinessProbe].map((probe) => probe?.httpGet);
    expect(probes(api)).toEqual([
      { path: '/livez', port: 'http' },
      { path: '/livez', port: 'http' },
      { path: '/readyz', port: 'http' },
    ]);
    expect(probes(worker)).toEqual([
      { path: '/livez', port: 'health' },
      { path: '/livez', port: 'health' },
      { path: '/readyz', port: 'health' },
    ]);
    // The worker's probe port opens only after it bundled its workflows: minutes, not seconds.
    const startup = worker.startupProbe ?? {};
    expect((startup.periodSeconds ?? 10) * (startup.failureThreshold ?? 3)).toBeGreaterThanOrEqual(
      120,
    );
  });

  it('migrates in a pre-install and pre-upgrade hook, after the chart Secret it reads', () => {
    const job = find(minimal, 'Job', 'herald-migrate');
    const secret = find(minimal, 'Secret', 'herald-secrets');
    for (const hook of [job, secret]) {
      expect(hook.metadata.annotations?.['helm.sh/hook']).toBe('pre-install,pre-upgrade');
    }
    const weight = (of: Manifest) => Number(of.metadata.annotations?.['helm.sh/hook-weight']);
    expect(weight(secret)).toBeLessThan(weight(job));
    expect(Object.keys(secret.stringData ?? {}).sort()).toEqual(['DATABASE_URL', 'HERALD_SECRET']);
  });

  it("scrapes both Services' metrics port with the ServiceMonitor; the ingress routes http only", () => {
    const monitor = find(production, 'ServiceMonitor', 'herald');
    expect(monitor.apiVersion).toBe('monitoring.coreos.com/v1');
    expect(monitor.metadata.labels?.release).toBe('kube-prometheus-stack');
    expect(monitor.spec?.endpoints).toMatchObject([{ port: 'metrics', path: '/metrics' }]);
    for (const component of ['api', 'worker']) {
      const service = find(production, 'Service', `herald-${component}`);
      const labels = service.metadata.labels ?? {};
      expect(
        Object.entries(monitor.spec?.selector?.matchLabels ?? {}).every(
          ([key, value]) => labels[key] === value,
        ),
        component,
      ).toBe(true);
      expect(monitor.spec?.selector?.matchExpressions?.[0]?.values).toContain(
        labels['app.kubernetes.io/component'],
      );
      expect(service.spec?.ports).toContainEqual({
        name: 'metrics',
        port: 9464,
        targetPort: 'metrics',
      });
    }
    const backends = (find(production, 'Ingress', 'herald').spec?.rules ?? []).flatMap((rule) =>
      rule.http.paths.map((path) => path.backend.service),
    );
    expect(backends).toEqual([{ name: 'herald-api', port: { name: 'http' } }]);
  });

  it('runs non-root on a read-only root filesystem, /tmp writable, no service account token', () => {
    for (const [kind, name] of workloads) {
      const spec = podSpec(production, kind, name);
      expect(spec.securityContext, name).toMatchObject({ runAsNonRoot: true, runAsUser: 1000 });
      expect(spec.automountServiceAccountToken, name).toBe(false);
      expect(spec.volumes, name).toEqual([{ name: 'tmp', emptyDir: {} }]);
      const only = container(production, kind, name);
      expect(only.securityContext, name).toEqual({
        allowPrivilegeEscalation: false,
        readOnlyRootFilesystem: true,
        capabilities: { drop: ['ALL'] },
      });
      expect(only.volumeMounts, name).toEqual([{ name: 'tmp', mountPath: '/tmp' }]);
    }
  });

  it('refuses values without the database secret, naming both ways to give it', () => {
    const result = helmTemplate([
      '--values',
      MINIMAL_VALUES,
      '--set',
      'database.url=',
      '--set',
      'heraldSecret.existingSecret=herald-secret',
    ]);
    expect(result.status).toBe(1);
    expect(result.stdout).toBe('');
    expect(result.stderr).toMatch(
      templateError(
        'database.existingSecret (a Secret holding DATABASE_URL) or database.url is required',
      ),
    );
  });

  it('refuses a variable the chart sets itself, a bad TEMPORAL_ADDRESS, a ServiceMonitor without metrics', () => {
    const refused = (args: string[]) => helmTemplate(['--values', MINIMAL_VALUES, ...args]);
    const own = refused(['--set', 'env.DATABASE_URL=postgres://elsewhere/herald']);
    expect(own.status).toBe(1);
    expect(own.stderr).toMatch(
      templateError('env.DATABASE_URL is set by the chart itself: use its own value instead'),
    );

    const address = refused(['--set', 'temporal.address=https://temporal.example.com']);
    expect(address.status).toBe(1);
    expect(address.stderr).toBe(
      [
        "Error: values don't meet the specifications of the schema(s) in the following chart(s):",
        'herald:',
        "- at '/temporal/address': 'https://temporal.example.com' does not match pattern '^([^\\\\s:/]+:\\\\d+)?$'",
        '',
        '',
      ].join('\n'),
    );

    const monitor = refused([
      '--set',
      'serviceMonitor.enabled=true',
      '--set',
      'metrics.enabled=false',
    ]);
    expect(monitor.status).toBe(1);
    expect(monitor.stderr).toMatch(
      templateError(
        'serviceMonitor.enabled needs metrics.enabled: the pods serve no /metrics without it',
      ),
    );
  });
});
