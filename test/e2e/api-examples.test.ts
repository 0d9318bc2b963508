import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { addCredits } from '../../db/credits.js';
import { repoRoot } from '../support/processes.js';
import { createTenant, openStack, type Stack } from '../support/stack.js';

/**
 * Runs every snippet of docs/api/examples.md, as a user would (curl in bash, `node`, `python3`),
 * against a running api on a real port, the run's worker and its simulator. The snippets read
 * HERALD_URL, HERALD_API_KEY and HERALD_SIMULATOR_URL; the curl follow-ups also BATCH_ID,
 * REQUEST_ID and CODE, which the text tells the reader to set from the answers before.
 */

const run = promisify(execFile);
const DOC = join(repoRoot, 'docs/api/examples.md');

interface Snippet {
  name: string;
  language: string;
  code: string;
}

/** The fenced blocks each marked `<!-- snippet: name -->`, in the order the page gives them. */
function snippetsOf(markdown: string): Map<string, Snippet> {
  const found = new Map<string, Snippet>();
  for (const [, name = '', language = '', code = ''] of markdown.matchAll(
    /<!-- snippet: ([a-z-]+) -->\n```(\w+)\n([\s\S]*?)\n```/g,
  ))
    found.set(name, { name, language, code });
  return found;
}

let stack: Stack;
let snippets: Map<string, Snippet>;
let workDir: string;
let env: NodeJS.ProcessEnv;

beforeAll(async () => {
  stack = await openStack();
  const tenant = await createTenant(stack.admin);
  await addCredits(stack.sql, tenant.workspaceId, 100);
  await stack.app.listen({ port: 0, host: '127.0.0.1' });
  const { port } = stack.app.server.address() as { port: number };
  env = {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    HERALD_URL: `http://127.0.0.1:${port}`,
    HERALD_API_KEY: tenant.token,
    HERALD_SIMULATOR_URL: inject('simulatorUrl'),
  };
  snippets = snippetsOf(await readFile(DOC, 'utf8'));
  workDir = await mkdtemp(join(tmpdir(), 'herald-api-examples-'));
});

afterAll(async () => {
  await stack?.close();
  if (workDir) await rm(workDir, { recursive: true, force: true });
});

/** Runs a snippet as its language's reader would; its stdout (a non-zero exit fails the test). */
async function runSnippet(name: string, extra: Record<string, string> = {}): Promise<string> {
  const snippet = snippets.get(name);
  if (!snippet) throw new Error(`docs/api/examples.md has no snippet ${name}`);
  const options = { env: { ...env, ...extra }, timeout: 30_000 };
  if (snippet.language === 'sh')
    return (await run('bash', ['-e', '-o', 'pipefail', '-c', snippet.code], options)).stdout;
  const file = join(workDir, `${name}.${snippet.language === 'js' ? 'mjs' : 'py'}`);
  await writeFile(file, snippet.code);
  const program = snippet.language === 'js' ? process.execPath : 'python3';
  return (await run(program, [file], options)).stdout;
}

describe('docs/api/examples.md', () => {
  it('has the SMS and OTP examples in curl, Node and Python', () => {
    expect([...snippets.values()].map(({ name, language }) => `${name} ${language}`)).toEqual([
      'curl-send-sms sh',
      'curl-look-up sh',
      'curl-send-otp sh',
      'curl-inbox sh',
      'curl-verify-otp sh',
      'node-send-sms js',
      'node-otp js',
      'python-send-sms python',
      'python-otp python',
    ]);
  });

  it('shows the variables users set, by the names the snippets read', () => {
    for (const { name, code } of snippets.values()) {
      if (name.endsWith('-inbox')) continue;
      expect(code, name).toContain('HERALD_URL');
      expect(code, name).toContain('HERALD_API_KEY');
    }
  });

  it('curl: sends an SMS with an Idempotency-Key (a retry answers the same batch), looks it up, sends and verifies an OTP', async () => {
    const sent = JSON.parse(await runSnippet('curl-send-sms'));
    expect(sent.message).toBe('Messages queued for sending.');
    expect(sent.data.message).toMatchObject({ reference: 'order-1234', total_recipients: 2 });
    const batchId = String(sent.data.message.id);
    const retried = JSON.parse(await runSnippet('curl-send-sms'));
    expect(retried.data.message.id).toBe(sent.data.message.id);

    const found = JSON.parse(await runSnippet('curl-look-up', { BATCH_ID: batchId }));
    expect(found.data.message).toMatchObject({ id: Number(batchId), reference: 'order-1234' });

    const otp = JSON.parse(await runSnippet('curl-send-otp'));
    expect(otp).toMatchObject({ message: 'Verification code sent.', data: { status: 'accepted' } });
    const code = await waitForCode(() => runSnippet('curl-inbox'));
    const verified = await runSnippet('curl-verify-otp', {
      REQUEST_ID: otp.data.request_id,
      CODE: code,
    });
    expect(JSON.parse(verified)).toEqual({ message: 'The code is verified.' });
  });

  it('Node: sends an SMS and looks its batch up', async () => {
    expect(await runSnippet('node-send-sms')).toMatch(
      /^batch (\d+): queued\nbatch \1: (queued|completed), \d sent\n$/,
    );
  });

  it('Node: sends an OTP, reads it at the simulator and verifies it', async () => {
    expect(await runSnippet('node-otp')).toBe('200 The code is verified.\n');
  });

  it('Python: sends an SMS and looks its batch up', async () => {
    expect(await runSnippet('python-send-sms')).toMatch(
      /^batch (\d+): queued\nbatch \1: (queued|completed), \d sent\n$/,
    );
  });

  it('Python: sends an OTP, reads it at the simulator and verifies it', async () => {
    expect(await runSnippet('python-otp')).toBe('200 The code is verified.\n');
  });
});

/** The code in the newest message of the inbox the snippet reads, once one has arrived. */
async function waitForCode(readInbox: () => Promise<string>): Promise<string> {
  for (let tries = 0; tries < 50; tries++) {
    const { messages } = JSON.parse(await readInbox()) as { messages: { body: string }[] };
    const code = /\d{4,8}/.exec(messages[0]?.body ?? '')?.[0];
    if (code) return code;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  throw new Error('no code reached the simulator inbox');
}
