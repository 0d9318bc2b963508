import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { envSchema, parseEnv } from '../../config/env.js';

interface Service {
  image?: string;
  build?: string | { context?: string; dockerfile?: string };
  command?: string | string[];
  environment?: Record<string, unknown> | string[];
  healthcheck?: { test?: string | string[]; disable?: boolean };
  depends_on?: string[] | Record<string, { condition?: string }>;
  volumes?: string[];
}

const root = new URL('../../', import.meta.url);
const compose = parse(readFileSync(new URL('docker-compose.yml', root), 'utf8'), {
  merge: true,
}) as { services: Record<string, Service> };
const dockerfile = readFileSync(new URL('Dockerfile', root), 'utf8');

const heraldServices = ['herald-migrate', 'herald-api', 'herald-worker'];
const expectedServices = [
  'postgres',
  'temporal-schema',
  'temporal',
  'temporal-namespace',
  'temporal-ui',
  ...heraldServices,
];
/** A value for `${VAR:?message}` and bare `${VAR}`: long enough for HERALD_SECRET's minimum. */
const SAMPLE = 'sample-value-0123456789-0123456789';
/** What an operator gives a required `…_URL` variable. */
const SAMPLE_URL = 'https://sample.example/';

function service(name: string): Service {
  const found = compose.services[name];
  if (!found) throw new Error(`docker-compose.yml has no service ${name}`);
  return found;
}

function environmentOf(name: string): Record<string, string> {
  const env = service(name).environment ?? {};
  const entries = Array.isArray(env)
    ? env.map((item) => [item.split('=')[0] ?? '', item.split('=').slice(1).join('=')])
    : Object.entries(env).map(([key, value]) => [key, value == null ? '' : String(value)]);
  return Object.fromEntries(entries);
}

/** Compose interpolation: `${VAR:-default}` → default, `${VAR:?message}` and `${VAR}` → SAMPLE. */
function interpolate(value: string): string {
  return value.replace(
    /\$\{(\w+)(?::?([-?])([^}]*))?\}/g,
    (_, name: string, kind: string | undefined, rest = '') =>
      kind === '-' ? rest : name.endsWith('_URL') ? SAMPLE_URL : SAMPLE,
  );
}

function commandOf(name: string): string[] {
  const command = service(name).command ?? [];
  return Array.isArray(command) ? command : command.trim().split(/\s+/);
}

function dependencyCondition(name: string, dependency: string): string | undefined {
  const dependsOn = service(name).depends_on ?? {};
  return Array.isArray(dependsOn) ? undefined : dependsOn[dependency]?.condition;
}

/** The command a service's health check runs, without the CMD / CMD-SHELL prefix. */
function healthcheckCommand(name: string): string {
  const check = service(name).healthcheck;
  if (!check?.test || check.disable) return '';
  const [kind, ...command] = [check.test].flat();
  return kind === 'CMD' || kind === 'CMD-SHELL' ? command.join(' ') : '';
}

/** Exact versions only: postgres versions are major.minor; everything else needs major.minor.patch. */
function isPinned(image: string): boolean {
  if (/@sha256:[0-9a-f]{64}$/.test(image)) return true;
  const [, repository, tag] = /^(.+?)(?::([^:/]+))?$/.exec(image) ?? [];
  if (!repository || !tag || tag === 'latest') return false;
  const parts = repository === 'postgres' ? 2 : 3;
  return new RegExp(`^v?\\d+(\\.\\d+){${parts - 1}}(-[\\w.-]+)?$`).test(tag);
}

/** Hours in a Go-style duration such as `168h`, `7d` or `72h30m`. */
function durationHours(duration: string): number {
  const units: Record<string, number> = { d: 24, h: 1, m: 1 / 60, s: 1 / 3600 };
  if (!/^(\d+[dhms])+$/.test(duration)) throw new Error(`not a duration: ${duration}`);
  return [...duration.matchAll(/(\d+)([dhms])/g)].reduce(
    (hours, [, amount, unit]) => hours + Number(amount) * (units[unit ?? ''] ?? 0),
    0,
  );
}

function dockerfileInstructions(keyword: string): string[] {
  const pattern = new RegExp(`^${keyword}\\s+(.+)$`, 'gim');
  return [...dockerfile.matchAll(pattern)].map((match) => (match[1] ?? '').trim());
}

describe('docker-compose.yml production topology', () => {
  it('defines every service of the topology', () => {
    expect(Object.keys(compose.services)).toEqual(expect.arrayContaining(expectedServices));
  });

  it('pins every image to an exact version', () => {
    const images = Object.values(compose.services).flatMap((svc) => (svc.image ? [svc.image] : []));
    expect(images.length).toBeGreaterThanOrEqual(5);
    expect(images.filter((image) => !isPinned(image))).toEqual([]);
    expect(['node:20', 'postgres:16', 'temporalio/ui:latest', 'x:1.2'].some(isPinned)).toBe(false);
  });

  it('builds the herald services from the Dockerfile', () => {
    for (const name of heraldServices) {
      const build = service(name).build;
      const file = typeof build === 'string' ? 'Dockerfile' : (build?.dockerfile ?? 'Dockerfile');
      expect(build, name).toBeDefined();
      expect(file, name).toBe('Dockerfile');
    }
  });

  it('gives herald services only variables of the config contract, and valid values', () => {
    for (const name of heraldServices) {
      const env = environmentOf(name);
      expect(
        Object.keys(env).filter((key) => !(key in envSchema.shape)),
        name,
      ).toEqual([]);
      const values = Object.entries(env)
        .map(([key, value]) => [key, interpolate(value)])
        .filter(([, value]) => value !== '');
      const parsed = envSchema.safeParse(Object.fromEntries(values));
      expect(parsed.error?.issues ?? [], name).toEqual([]);
      // With the rules between variables: PUBLIC_URL https in production (config/env.ts).
      expect(() => parseEnv(Object.fromEntries(values)), name).not.toThrow();
      expect(env.HERALD_SECRET, name).toMatch(/^\$\{HERALD_SECRET:\?.+\}$/);
      // Unset, PUBLIC_URL would be plain http, which production refuses.
      expect(env.PUBLIC_URL, name).toMatch(/^\$\{PUBLIC_URL:\?.+\}$/);
      expect(interpolate(env.ALLOW_INSECURE_PUBLIC_URL ?? ''), name).toBe('false');
      // Unset, `own` would point at a simulator on localhost that no container runs.
      expect(env.OWN_PROVIDER_URL, name).toMatch(/^\$\{OWN_PROVIDER_URL:\?.+\}$/);
      expect(env.NODE_ENV, name).toBe('production');
    }
  });

  it('points DATABASE_URL at the herald database and TEMPORAL_ADDRESS at the temporal service', () => {
    const env = environmentOf('herald-api');
    const databaseUrl = interpolate(env.DATABASE_URL ?? '');
    expect(envSchema.shape.DATABASE_URL.safeParse(databaseUrl).success).toBe(true);
    expect(new URL(databaseUrl)).toMatchObject({ hostname: 'postgres', pathname: '/herald' });
    const temporalAddress = interpolate(env.TEMPORAL_ADDRESS ?? '');
    expect(envSchema.shape.TEMPORAL_ADDRESS.safeParse(temporalAddress).success).toBe(true);
    expect(temporalAddress).toBe('temporal:7233');
  });

  it('health-checks postgres, temporal, herald-api and herald-worker (their /readyz)', () => {
    expect(healthcheckCommand('postgres')).toMatch(/^pg_isready\b/);
    expect(healthcheckCommand('temporal')).not.toBe('');
    expect(healthcheckCommand('herald-api')).toMatch(
      /^node -e .*'http:\/\/127\.0\.0\.1:3000\/readyz'/,
    );
    const workerEnv = environmentOf('herald-worker');
    expect(envSchema.shape.WORKER_HEALTH_PORT.parse(workerEnv.WORKER_HEALTH_PORT)).toBe(3001);
    expect(healthcheckCommand('herald-worker')).toMatch(
      /^node -e .*'http:\/\/127\.0\.0\.1:3001\/readyz'/,
    );
  });

  it('has the prometheus service scrape every metrics port compose opens, with the alert rules', () => {
    const prometheus = parse(
      readFileSync(new URL('deploy/prometheus/prometheus.yml', root), 'utf8'),
    ) as {
      rule_files: string[];
      scrape_configs: { job_name: string; static_configs: { targets: string[] }[] }[];
    };
    const targets = prometheus.scrape_configs.flatMap((job) =>
      job.static_configs.flatMap((config) => config.targets),
    );
    const metricsPort = (service: string) =>
      envSchema.shape.METRICS_PORT.parse(environmentOf(service).METRICS_PORT);
    const temporalEndpoint = environmentOf('temporal').PROMETHEUS_ENDPOINT ?? '';
    expect(targets).toEqual([
      `herald-api:${metricsPort('herald-api')}`,
      `herald-worker:${metricsPort('herald-worker')}`,
      `temporal:${temporalEndpoint.split(':')[1]}`,
    ]);
    expect(prometheus.rule_files).toEqual(['alerts.yml']);
    expect(compose.services.prometheus?.volumes).toContain(
      './deploy/prometheus:/etc/prometheus:ro',
    );
  });

  it('sets up both Temporal schemas with the postgres12 plugin', () => {
    const script = commandOf('temporal-schema').join(' ');
    expect(script).toContain('--plugin postgres12');
    expect(script).toContain('/etc/temporal/schema/postgresql/v12/temporal/versioned');
    expect(script).toContain('/etc/temporal/schema/postgresql/v12/visibility/versioned');
  });

  it('creates the namespace with a retention of at least 7 days', () => {
    const script = commandOf('temporal-namespace').join(' ');
    const retention = /--retention[=\s]+(\S+)/.exec(script)?.[1];
    expect(retention).toBeDefined();
    expect(durationHours(retention ?? '')).toBeGreaterThanOrEqual(7 * 24);
  });

  it('runs the api and worker roles', () => {
    expect(commandOf('herald-api')).toEqual(['node', 'bin/herald.js', 'api']);
    expect(commandOf('herald-worker')).toEqual(['node', 'bin/herald.js', 'worker']);
    expect(commandOf('herald-migrate')).toEqual(['node', 'bin/herald.js', 'migrate']);
  });

  it('starts schema → temporal → namespace → herald in order', () => {
    const done = 'service_completed_successfully';
    expect(dependencyCondition('temporal-schema', 'postgres')).toBe('service_healthy');
    expect(dependencyCondition('temporal', 'temporal-schema')).toBe(done);
    expect(dependencyCondition('temporal-namespace', 'temporal')).toBe('service_healthy');
    expect(dependencyCondition('herald-migrate', 'postgres')).toBe('service_healthy');
    for (const name of ['herald-api', 'herald-worker']) {
      expect(dependencyCondition(name, 'herald-migrate'), name).toBe(done);
      expect(dependencyCondition(name, 'temporal-namespace'), name).toBe(done);
    }
  });

  it('builds the image on a pinned base and runs it as a non-root user', () => {
    const stages = dockerfileInstructions('FROM').map((line) => line.split(/\s+/));
    const stageNames = stages.map((words) => words[2]?.toLowerCase());
    const bases = stages
      .map((words) => words[0] ?? '')
      .filter((base) => !stageNames.includes(base));
    expect(bases.length).toBeGreaterThan(0);
    expect(bases.filter((image) => !isPinned(image))).toEqual([]);
    const finalStage = dockerfile.split(/^FROM\s/m).at(-1) ?? '';
    const users = [...finalStage.matchAll(/^USER\s+(\S+)/gm)].map((match) => match[1]);
    expect(users.at(-1)).toBeDefined();
    expect(['root', '0', '0:0']).not.toContain(users.at(-1));
    expect(dockerfileInstructions('CMD').at(-1)).toBe('["node", "bin/herald.js", "api"]');
  });
});
