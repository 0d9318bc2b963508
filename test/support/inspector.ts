/**
 * The MCP Inspector, installed beside the project by scripts/install-mcp-clients.sh and run on
 * the Node 22 installed there (the Inspector needs Node >= 22.19, whichever Node runs the tests).
 */
import { spawn } from 'node:child_process';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { repoRoot } from './processes.js';

export const node22 = join(repoRoot, '.tools/node22/node_modules/.bin/node');
const inspectorCliLauncher = join(
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
  const home = await mkdtemp(join(tmpdir(), 'herald-inspector-'));
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    HOME: home,
    MCP_STORAGE_DIR: join(home, 'storage'),
    MCP_INSPECTOR_OAUTH_STATE_PATH: join(home, 'storage', 'oauth.json'),
    MCP_INSPECTOR_SECRET_STORE: 'file',
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
        inspectorCliLauncher,
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
  return { run, home };
}
