import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { cp, mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { childEnvironment } from '../../config/child-environment.js';
import { run } from '../embedded/processes.js';

/**
 * The Temporal server and its SQL schema tool for `herald cluster`, built from Temporal's own Go
 * module (no Docker here). Looked up in this order: `temporal-server` and `temporal-sql-tool` on
 * PATH → the project-local build in `.tools/temporal-server/` → a build into that folder, once.
 * Keep the version in step with the images in docker-compose.yml (test/cluster checks it).
 */

export const TEMPORAL_SERVER_VERSION = '1.32.2';
/** The UI server (its module carries the built web assets), as docker-compose.yml's temporal-ui. */
export const TEMPORAL_UI_VERSION = '2.34.0';
const UI_MODULE = 'github.com/temporalio/ui-server/v2';
/** The module's go.mod asks for this toolchain; the Go module proxy serves it. */
const GO_TOOLCHAIN = 'go1.26.10';
const MODULE = 'go.temporal.io/server';

const PROJECT_ROOT = fileURLToPath(new URL('../../', import.meta.url));
export const LOCAL_SERVER_DIR = join(PROJECT_ROOT, '.tools', 'temporal-server');
export const LOCAL_UI_DIR = join(PROJECT_ROOT, '.tools', 'temporal-ui');

export interface TemporalBinaries {
  server: string;
  sqlTool: string;
  /** `schema/postgresql/v12` of the same version: `temporal/versioned`, `visibility/versioned`. */
  postgresSchemaDir: string;
}

export async function findOrBuildTemporalServer(
  log: (line: string) => void,
): Promise<TemporalBinaries> {
  const onPath = await fromPath();
  if (onPath) return onPath;
  const local = localBuild(LOCAL_SERVER_DIR);
  if (await isCurrentBuild(LOCAL_SERVER_DIR)) return local;
  await buildInto(LOCAL_SERVER_DIR, log);
  return local;
}

function localBuild(dir: string): TemporalBinaries {
  return {
    server: join(dir, 'bin', 'temporal-server'),
    sqlTool: join(dir, 'bin', 'temporal-sql-tool'),
    postgresSchemaDir: join(dir, 'schema', 'postgresql', 'v12'),
  };
}

async function isCurrentBuild(dir: string): Promise<boolean> {
  const version = await readFile(join(dir, 'VERSION'), 'utf8').catch(() => '');
  const build = localBuild(dir);
  return (
    version.trim() === TEMPORAL_SERVER_VERSION &&
    existsSync(build.server) &&
    existsSync(build.sqlTool) &&
    existsSync(join(build.postgresSchemaDir, 'temporal', 'versioned'))
  );
}

/** Binaries on PATH, of this version; their schema files come from the Go module cache. */
async function fromPath(): Promise<TemporalBinaries | undefined> {
  const version = await run('temporal-server', ['--version']).catch(() => undefined);
  if (version?.code !== 0 || !version.stdout.includes(TEMPORAL_SERVER_VERSION)) return undefined;
  const sqlTool = await run('temporal-sql-tool', ['--version']).catch(() => undefined);
  if (sqlTool?.code !== 0) return undefined;
  const moduleDir = await downloadModule().catch(() => undefined);
  if (!moduleDir) return undefined;
  return {
    server: 'temporal-server',
    sqlTool: 'temporal-sql-tool',
    postgresSchemaDir: join(moduleDir, 'schema', 'postgresql', 'v12'),
  };
}

const goEnv = () => childEnvironment({ GOTOOLCHAIN: GO_TOOLCHAIN, GOFLAGS: '-buildvcs=false' });

/** The module's folder in the Go module cache (downloaded if absent). */
async function downloadModule(module = `${MODULE}@v${TEMPORAL_SERVER_VERSION}`): Promise<string> {
  const result = await run('go', ['mod', 'download', '-json', module], {
    env: goEnv(),
    cwd: PROJECT_ROOT,
  });
  if (result.code !== 0) throw new Error(`go mod download failed: ${result.stderr}`);
  const dir = (JSON.parse(result.stdout) as { Dir?: string }).Dir;
  if (!dir) throw new Error(`go mod download printed no Dir: ${result.stdout}`);
  return dir;
}

/**
 * `go install` of the server and the schema tool into a scratch folder beside `dir`, with the
 * schema files of the same module, then one rename: an interrupted build leaves no half folder.
 * Go's module and build caches keep the next build short.
 */
async function buildInto(dir: string, log: (line: string) => void): Promise<void> {
  const go = await run('go', ['version']).catch(() => undefined);
  if (go?.code !== 0) {
    throw new Error(
      `Go is needed once, to build the Temporal server ${TEMPORAL_SERVER_VERSION} into ${dir}, and ` +
        'was not found. Install Go (https://go.dev/dl/), or put temporal-server and ' +
        'temporal-sql-tool of that version on PATH.',
    );
  }
  log(
    `Building the Temporal server ${TEMPORAL_SERVER_VERSION} and its schema tool into ${dir} ` +
      `with ${GO_TOOLCHAIN}: once, about 4 minutes on 2 cores after downloading its modules.`,
  );
  const started = Date.now();
  const scratch = `${dir}.build-tmp`;
  await rm(scratch, { recursive: true, force: true });
  await mkdir(join(scratch, 'bin'), { recursive: true });
  const moduleDir = await downloadModule();
  log(`  modules downloaded (${elapsed(started)}); compiling…`);
  const ticker = setInterval(() => log(`  still compiling (${elapsed(started)})…`), 30_000);
  try {
    const built = await goInstall(scratch);
    if (built.code !== 0) throw new Error(`Building the Temporal server failed:\n${built.output}`);
  } finally {
    clearInterval(ticker);
  }
  await rename(join(scratch, 'bin', 'server'), join(scratch, 'bin', 'temporal-server'));
  await rename(join(scratch, 'bin', 'sql'), join(scratch, 'bin', 'temporal-sql-tool'));
  await cp(join(moduleDir, 'schema', 'postgresql'), join(scratch, 'schema', 'postgresql'), {
    recursive: true,
  });
  // The module cache is read-only; the copy must not be, or the next rebuild could not remove it.
  await run('chmod', ['-R', 'u+w', join(scratch, 'schema')]);
  await writeFile(join(scratch, 'VERSION'), `${TEMPORAL_SERVER_VERSION}\n`);
  await rm(dir, { recursive: true, force: true });
  await rename(scratch, dir);
  log(`Built the Temporal server in ${elapsed(started)}.`);
}

function goInstall(scratch: string): Promise<{ code: number | null; output: string }> {
  const packages = ['cmd/server', 'cmd/tools/sql'].map(
    (path) => `${MODULE}/${path}@v${TEMPORAL_SERVER_VERSION}`,
  );
  return new Promise((resolve, reject) => {
    const child = spawn('go', ['install', ...packages], {
      cwd: PROJECT_ROOT,
      env: { ...goEnv(), GOBIN: join(scratch, 'bin') },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    const collect = (chunk: Buffer) => {
      output = (output + chunk.toString()).slice(-8000);
    };
    child.stdout.on('data', collect);
    child.stderr.on('data', collect);
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, output }));
  });
}

function elapsed(since: number): string {
  const seconds = Math.round((Date.now() - since) / 1000);
  return seconds < 120 ? `${seconds} s` : `${Math.floor(seconds / 60)} min ${seconds % 60} s`;
}

/**
 * The Temporal UI server, `temporal-ui-server` on PATH or built once into `.tools/temporal-ui/`
 * from a copy of its module (whose replace directives rule out `go install`); undefined when Go
 * is missing or the build fails: the cluster runs without a UI then.
 */
export async function findOrBuildTemporalUi(
  log: (line: string) => void,
): Promise<string | undefined> {
  const onPath = await run('temporal-ui-server', ['--version']).catch(() => undefined);
  if (onPath?.code === 0 && onPath.stdout.includes(TEMPORAL_UI_VERSION))
    return 'temporal-ui-server';
  const binary = join(LOCAL_UI_DIR, 'bin', 'temporal-ui-server');
  const version = await readFile(join(LOCAL_UI_DIR, 'VERSION'), 'utf8').catch(() => '');
  if (version.trim() === TEMPORAL_UI_VERSION && existsSync(binary)) return binary;
  const started = Date.now();
  log(
    `Building the Temporal UI server ${TEMPORAL_UI_VERSION} into ${LOCAL_UI_DIR} (once, about a minute)…`,
  );
  const scratch = `${LOCAL_UI_DIR}.build-tmp`;
  try {
    const moduleDir = await downloadModule(`${UI_MODULE}@v${TEMPORAL_UI_VERSION}`);
    await rm(scratch, { recursive: true, force: true });
    await cp(moduleDir, join(scratch, 'src'), { recursive: true });
    await run('chmod', ['-R', 'u+w', scratch]);
    const built = await run(
      'go',
      ['build', '-o', join(scratch, 'bin', 'temporal-ui-server'), './cmd/server'],
      {
        cwd: join(scratch, 'src'),
        env: childEnvironment({ GOFLAGS: '-buildvcs=false' }),
      },
    );
    if (built.code !== 0) throw new Error(built.stderr.slice(-4000));
    await rm(join(scratch, 'src'), { recursive: true, force: true });
    await writeFile(join(scratch, 'VERSION'), `${TEMPORAL_UI_VERSION}\n`);
    await rm(LOCAL_UI_DIR, { recursive: true, force: true });
    await rename(scratch, LOCAL_UI_DIR);
    log(`Built the Temporal UI server in ${elapsed(started)}.`);
    return binary;
  } catch (error) {
    log(
      `The Temporal UI server could not be built, so the cluster runs without it: ${(error as Error).message}`,
    );
    await rm(scratch, { recursive: true, force: true });
    return undefined;
  }
}
