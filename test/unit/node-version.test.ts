import { spawn, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';
import { freePorts, listening } from '../support/processes.js';

/*
 * Node 22 LTS is the floor (package.json `engines`) and Node 24 is tested too (.ci/run): every
 * locked package accepts both, so `npm ci` warns of no engine; the image, CI's installs and the
 * launcher's refusal all follow the same floor.
 */

const root = new URL('../../', import.meta.url);
const read = (file: string) => readFileSync(new URL(file, root), 'utf8');
const nodeRange = (JSON.parse(read('package.json')) as { engines: { node: string } }).engines.node;
const floor = /^>=(\d+)\.(\d+)$/.exec(nodeRange);
const floorVersion = `${floor?.[1]}.${floor?.[2]}.0`;
// fastify's semver, the library npm checks `engines` with (npm-install-checks).
const semver = createRequire(import.meta.url)('semver') as {
  satisfies(version: string, range: string, options: { includePrerelease: boolean }): boolean;
};
const accepts = (version: string, range: string) =>
  semver.satisfies(version, range, { includePrerelease: true });
/** The Node builds scripts/ensure-node.sh installs, by major. */
const pinned = Object.fromEntries(
  [...read('scripts/ensure-node.sh').matchAll(/\[(\d+)\]=(\d+\.\d+\.\d+)/g)].map((match) => [
    match[1],
    match[2],
  ]),
);

describe('the Node floor', () => {
  it('is a Node 22 release that every locked package accepts, as is the Node 24 CI tests on', () => {
    expect(nodeRange).toMatch(/^>=22\.\d+$/);
    const lock = JSON.parse(read('package-lock.json')) as {
      packages: Record<string, { version?: string; engines?: { node?: string } }>;
    };
    const refusing = (version: string) =>
      Object.entries(lock.packages)
        .filter(
          ([path, entry]) => path && entry.engines?.node && !accepts(version, entry.engines.node),
        )
        .map(([path, entry]) => `${path}@${entry.version} wants node ${entry.engines?.node}`);
    expect(refusing(floorVersion)).toEqual([]);
    expect(pinned['24']).toMatch(/^24\./);
    expect(refusing(pinned['24'] ?? '')).toEqual([]);
  });

  it('is what CI installs and what the image runs', () => {
    expect(pinned['22']).toMatch(/^22\./);
    expect(accepts(pinned['22'] ?? '', nodeRange)).toBe(true);
    // Both install into .tools/node22: a different version there would reinstall it under a running CI.
    expect(read('scripts/install-mcp-clients.sh')).toContain(`node22_version=${pinned['22']} `);
    const bases = [...read('Dockerfile').matchAll(/^FROM\s+node:(\S+)/gm)].map((match) => match[1]);
    expect(bases).toEqual([
      `${pinned['22']}-bookworm-slim`,
      `${pinned['22']}-bookworm-slim`,
      `${pinned['22']}-bookworm-slim`,
    ]);
  });
});

describe('the launcher on an older Node', () => {
  it('refuses in one line naming the version found and what to install', () => {
    const refusal = (version: string) =>
      `Herald needs Node ${nodeRange} but this is Node ${version} (/usr/bin/node): install Node 22 LTS or newer (https://nodejs.org), or put the one scripts/ensure-node.sh installs first on PATH.`;
    const older = `${floor?.[1]}.${Number(floor?.[2]) - 1}.9`;
    expect(messages(['20.20.2', older, '18.0.0'])).toEqual([
      refusal('20.20.2'),
      refusal(older),
      refusal('18.0.0'),
    ]);
  });

  it('starts on the floor and anything newer', () => {
    expect(messages([floorVersion, '22.23.3', '23.0.0', '24.21.0', '26.1.0'])).toEqual([
      null,
      null,
      null,
      null,
      null,
    ]);
  });
});

/** The machine's own node when it is older than the floor (as on a fresh Debian machine), else none. */
const olderNode = ['/usr/bin/node', '/usr/local/bin/node'].find((path) => {
  const run = spawnSync(path, ['-p', 'process.versions.node'], { encoding: 'utf8' });
  return run.status === 0 && messages([run.stdout.trim()])[0] !== null;
});

/** bin/node-version.js's answer for each version, from a plain node as the launcher runs it. */
function messages(versions: string[]): (string | null)[] {
  const script = `const { unsupportedNodeMessage } = await import('./bin/node-version.js');
    console.log(JSON.stringify(${JSON.stringify(versions)}.map((version) => unsupportedNodeMessage(version, '/usr/bin/node') ?? null)));`;
  const run = spawnSync(process.execPath, ['--input-type=module', '--eval', script], {
    cwd: new URL('.', root),
    encoding: 'utf8',
  });
  return JSON.parse(run.stdout) as (string | null)[];
}

describe.runIf(olderNode)(`the launcher on this machine's older node (${olderNode})`, () => {
  it('runs the command on the Node scripts/ensure-node.sh provides, saying so', () => {
    const run = spawnSync(olderNode as string, ['bin/herald.js', '--help'], {
      cwd: new URL('.', root),
      encoding: 'utf8',
      env: { ...process.env, PATH: '/usr/bin:/bin' },
      timeout: 120_000,
    });
    expect(run.status, run.stderr).toBe(0);
    expect(run.stderr).toMatch(
      /^Herald needs Node >=\d+\.\d+; this is \d+\.\d+\.\d+: running on \S+\/\.tools\/node22\/\S+\/bin\/node \(scripts\/ensure-node\.sh\)\.\n$/,
    );
    expect(run.stdout).toMatch(/^Usage: herald <command> \[options\]/);
  });

  it('is ended with the launcher when the launcher is killed outright (SIGKILL)', async () => {
    const [port = 0] = await freePorts(1);
    const launcher = spawn(olderNode as string, ['bin/herald.js', 'simulator'], {
      cwd: new URL('.', root),
      env: { ...process.env, PATH: '/usr/bin:/bin', SIMULATOR_PORT: String(port) },
      stdio: 'ignore',
    });
    try {
      await expect.poll(() => listening(port), { timeout: 60_000, interval: 100 }).toBe(true);
      launcher.kill('SIGKILL');
      // Herald itself runs in a process group of its own: nothing but the launcher's end stops it.
      await expect.poll(() => listening(port), { timeout: 10_000, interval: 100 }).toBe(false);
    } finally {
      launcher.kill('SIGKILL');
    }
  }, 90_000);

  it('refuses in one line when that Node is too old as well, rather than loop', () => {
    const run = spawnSync(olderNode as string, ['bin/herald.js', '--help'], {
      cwd: new URL('.', root),
      encoding: 'utf8',
      env: { ...process.env, HERALD_SUPPORTED_NODE_RERUN: '1' },
    });
    expect(run.status).toBe(1);
    expect(run.stderr).toMatch(/^Herald needs Node >=\d+\.\d+ but this is Node .+\n$/);
    expect(run.stdout).toBe('');
  });
});
