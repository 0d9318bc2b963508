/**
 * The MCP Inspector, installed beside the project by scripts/install-mcp-clients.sh and run on
 * the Node 22 installed there (the Inspector needs Node >= 22.19, whichever Node runs the tests).
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { repoRoot } from './processes.js';

export const node22 = join(repoRoot, '.tools/node22/node_modules/.bin/node');
const inspectorLauncher = join(
  repoRoot,
  '.tools/inspector/node_modules/@modelcontextprotocol/inspector/clients/launcher/build/index.js',
);
/**
 * The 1.x web UI's static server. Its "Direct" connection has the browser call the MCP server
 * itself, so the 1.x proxy is not started; 2.x has no such mode (its backend makes every call).
 */
export const inspectorV1WebServer = join(
  repoRoot,
  '.tools/inspector-v1/node_modules/@modelcontextprotocol/inspector-client/bin/client.js',
);

export interface CliRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * One Inspector home per test: its catalog, OAuth state and secrets live in a fresh directory
 * (file store: no OS keychain), and its "open a browser" is a no-op, because the test's
 * Chromium is the browser.
 */
export async function inspectorCli(serverUrl: string, callbackUrl: string) {
  const home = await inspectorHome();
  const env: NodeJS.ProcessEnv = {
    ...home.env,
    // Interactive OAuth without a TTY: print the URL ("Please navigate to: …") and "open" it.
    MCP_AUTO_OPEN_ENABLED: 'true',
    BROWSER: 'true',
    NO_COLOR: '1',
  };
  /**
   * `inspector --cli --transport http --server-url … --format json <args>`; `onStderrLine` sees
   * each diagnostic line as it comes (the authorization URL is one).
   */
  const run = (args: string[], onStderrLine?: (line: string) => void): Promise<CliRun> => {
    const child = spawn(
      node22,
      [
        inspectorLauncher,
        '--cli',
        '--transport',
        'http',
        '--server-url',
        serverUrl,
        '--callback-url',
        callbackUrl,
        '--format',
        'json',
        ...args,
      ],
      { env, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => {
      stdout += chunk;
    });
    createInterface({ input: child.stderr }).on('line', (line) => {
      stderr += `${line}\n`;
      onStderrLine?.(line);
    });
    return new Promise((resolve) => {
      child.on('close', (code) => resolve({ code, stdout, stderr }));
    });
  };
  return { run };
}

/** A fresh home for one Inspector: catalog, OAuth state and secrets (file store, no keychain). */
async function inspectorHome() {
  const home = await mkdtemp(join(tmpdir(), 'herald-inspector-'));
  return {
    env: {
      PATH: process.env.PATH,
      HOME: home,
      MCP_STORAGE_DIR: join(home, 'storage'),
      MCP_INSPECTOR_OAUTH_STATE_PATH: join(home, 'storage', 'oauth.json'),
      MCP_INSPECTOR_SECRET_STORE: 'file',
    },
  };
}

/**
 * The 2.x web UI (`inspector --web`) for one server, on `port` of 127.0.0.1: the browser calls
 * its backend (`/api/*`, guarded by a token in the page URL), which makes every MCP and OAuth
 * request. Resolves once it listens, with the URL to open.
 */
export async function startInspectorWeb(serverUrl: string, port: number, era: string) {
  const home = await inspectorHome();
  const token = randomBytes(16).toString('hex');
  const child = spawn(
    node22,
    [
      inspectorLauncher,
      '--web',
      '--transport',
      'http',
      '--server-url',
      serverUrl,
      '--protocol-era',
      era,
    ],
    {
      env: {
        ...home.env,
        HOST: '127.0.0.1',
        CLIENT_PORT: String(port),
        MCP_SANDBOX_PORT: '0',
        MCP_APP_ORIGIN_PORT: '0',
        MCP_INSPECTOR_API_TOKEN: token,
        MCP_AUTO_OPEN_ENABLED: 'false',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let output = '';
  await new Promise<void>((resolve, reject) => {
    const collect = (chunk: Buffer) => {
      output += chunk;
      if (output.includes('is up and running')) resolve();
    };
    child.stdout.on('data', collect);
    child.stderr.on('data', collect);
    child.on('close', (code) => reject(new Error(`inspector --web exited ${code}: ${output}`)));
  });
  return {
    url: `http://127.0.0.1:${port}/?MCP_INSPECTOR_API_TOKEN=${token}`,
    origin: `http://127.0.0.1:${port}`,
    close: () => child.kill(),
  };
}
