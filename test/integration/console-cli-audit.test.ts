/**
 * The CLI's admin commands in the audit log: each state-changing command, run as an operator runs
 * it (`bin/herald.js … --json`), is recorded once it succeeded with the OS user as the actor,
 * source `cli` and `cli@<hostname>` as where it came from, in the workspace it acted on; a
 * read-only or failed command records nothing; no option's secret reaches the log; and the
 * console's Audit page lists the entries.
 */
import { randomBytes } from 'node:crypto';
import { hostname, userInfo } from 'node:os';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { ConsoleBrowser, openConsoleApp, visibleText } from '../support/console.js';
import { heraldEnv, runHerald, runHeraldJson } from '../support/processes.js';

let server: Awaited<ReturnType<typeof openConsoleApp>>;
const PASSWORD = 'correct horse 1';
const OPERATOR = userInfo().username;
const ORIGIN = `cli@${hostname()}`;

beforeAll(async () => {
  server = await openConsoleApp();
});
afterAll(() => server.close());

const cliEnv = () =>
  heraldEnv({ DATABASE_URL: inject('databaseUrl'), HERALD_SECRET: inject('secret') });

async function herald(...args: string[]): Promise<Record<string, unknown>> {
  const run = await runHeraldJson(args, cliEnv());
  expect(run.code, run.stderr).toBe(0);
  expect(run.stderr).toBe('');
  return run.json;
}

const entriesOf = (workspaceId: number) =>
  server.sql`
    select actor, source, action, target, details, address, user_agent, origin, user_id
    from audit_log where workspace_id = ${workspaceId} order by id`;

const fromCli = { source: 'cli', actor: OPERATOR, origin: ORIGIN };
const noBrowser = { address: null, userAgent: null, userId: null };

describe('audit of CLI commands', () => {
  it('records each change with who, what and from where, and the Audit page lists them', async () => {
    const slug = `a-${randomBytes(5).toString('hex')}`;
    const email = `owner@${slug}.test`;
    const workspace = await herald('workspace', 'create', '--name', 'Audited', '--slug', slug);
    await herald(
      'user',
      'create',
      '--workspace',
      slug,
      '--email',
      email,
      '--password',
      PASSWORD,
      '--role',
      'owner',
    );
    const key = await herald(
      'key',
      'create',
      '--workspace',
      slug,
      '--abilities',
      'messages:send,messages:read',
      '--name',
      'Backend',
    );
    await herald('key', 'revoke', '--id', String(key.id));
    // Already revoked: the command says so and, as the console, records nothing more.
    expect(await herald('key', 'revoke', '--id', String(key.id))).toEqual({
      id: key.id,
      revoked: true,
      already_revoked: true,
    });
    // Read-only: not recorded.
    await herald('member', 'list', '--workspace', slug);

    const entries = await entriesOf(workspace.id as number);
    expect(entries).toEqual([
      {
        ...fromCli,
        ...noBrowser,
        action: 'workspace.created',
        target: `workspace ${slug}`,
        details: { name: 'Audited' },
      },
      {
        ...fromCli,
        ...noBrowser,
        action: 'member.added',
        target: `member ${email}`,
        details: { role: 'owner' },
      },
      {
        ...fromCli,
        ...noBrowser,
        action: 'api_key.created',
        target: `API key ${key.prefix}`,
        // As the console's form: the routing fields it was not given are null.
        details: {
          abilities: 'messages:send,messages:read',
          name: 'Backend',
          provider: null,
          failover_route: null,
        },
      },
      {
        ...fromCli,
        ...noBrowser,
        action: 'api_key.revoked',
        target: `API key ${key.prefix}`,
        details: {},
      },
    ]);
    // The password was an option of `user create`; the key's token was its output.
    expect(JSON.stringify(entries)).not.toContain(PASSWORD);
    expect(JSON.stringify(entries)).not.toContain(String(key.token));

    const browser = new ConsoleBrowser(server.app);
    expect((await browser.signIn(email, PASSWORD)).status).toBe(303);
    const page = await browser.get(`/console/w/${slug}/audit`);
    expect(page.status).toBe(200);
    const text = visibleText(page.body);
    for (const line of [
      `${OPERATOR} CLI api_key.revoked API key ${key.prefix} ${ORIGIN}`,
      // Postgres keeps jsonb keys shortest first.
      `${OPERATOR} CLI api_key.created API key ${key.prefix} name: Backend · abilities: messages:send,messages:read ${ORIGIN}`,
      `${OPERATOR} CLI member.added member ${email} role: owner ${ORIGIN}`,
      `${OPERATOR} CLI workspace.created workspace ${slug} name: Audited ${ORIGIN}`,
    ])
      expect(text).toContain(line);
  });

  it('records nothing for a command that fails', async () => {
    const slug = `a-${randomBytes(5).toString('hex')}`;
    const workspace = await herald('workspace', 'create', '--name', 'Refused', '--slug', slug);
    const refused = await runHerald(
      ['credits', 'add', '--workspace', slug, '--amount', 'lots', '--json'],
      cliEnv(),
    );
    expect(refused.code).toBe(2);
    expect(JSON.parse(refused.stdout)).toEqual({
      error: {
        type: 'UsageError',
        message: '--amount "lots" must be a positive integer',
      },
    });
    const entries = await entriesOf(workspace.id as number);
    expect(entries.map((entry) => entry.action)).toEqual(['workspace.created']);
  });

  it('records a sender, a template and a member update as the console does, whichever door', async () => {
    const slug = `a-${randomBytes(5).toString('hex')}`;
    const owner = `owner@${slug}.test`;
    const [viaConsole, viaCli] = [`web@${slug}.test`, `cli@${slug}.test`];
    const workspace = await herald('workspace', 'create', '--name', 'Both doors', '--slug', slug);
    for (const [email, role] of [
      [owner, 'owner'],
      [viaConsole, 'developer'],
      [viaCli, 'developer'],
    ] as const)
      await herald(
        'user',
        'create',
        '--workspace',
        slug,
        '--email',
        email,
        '--password',
        PASSWORD,
        '--role',
        role,
      );
    const browser = new ConsoleBrowser(server.app);
    expect((await browser.signIn(owner, PASSWORD)).status).toBe(303);
    const base = `/console/w/${slug}`;
    const since = Number(
      (await server.sql`select coalesce(max(id), 0) as id from audit_log`)[0]?.id,
    );

    // A sender id asked for in the console, then approved by the operator's `sender create`.
    await browser.get(`${base}/otp-senders`);
    const asked = await browser.post(`${base}/otp-senders`, { provider: 'own', sender: 'Acme' });
    expect(asked.status).toBe(201);
    await herald('sender', 'create', '--workspace', slug, '--provider', 'own', '--sender', 'Acme');

    await browser.get(`${base}/otp-templates`);
    const template = await browser.post(`${base}/otp-templates`, {
      slug: 'web-code',
      name: '',
      body: 'Your code is {code}',
      purpose: 'transactional',
      enabled: 'on',
    });
    expect(template.status).toBe(201);
    await herald(
      'template',
      'create',
      '--workspace',
      slug,
      '--slug',
      'cli-code',
      '--body',
      'Code {code}',
    );

    const teamForms: Record<string, string>[] = [
      { action: 'role', role: 'admin' },
      { action: 'suspend' },
      { action: 'reactivate' },
    ];
    for (const action of teamForms) {
      await browser.get(`${base}/team`);
      expect(
        (await browser.post(`${base}/team/members`, { email: viaConsole, ...action })).status,
      ).toBe(303);
    }
    const update = ['member', 'update', '--workspace', slug, '--email', viaCli];
    await herald(...update, '--role', 'admin');
    await herald(...update, '--status', 'suspended');
    await herald(...update, '--status', 'active');
    // Changes nothing: recorded by neither door.
    await herald(...update, '--status', 'active');

    const entries = await server.sql<
      { source: string; action: string; target: string; details: object }[]
    >`
      select source, action, target, details from audit_log
      where workspace_id = ${workspace.id as number} and id > ${since} order by id`;
    expect(entries).toEqual([
      {
        source: 'console',
        action: 'sender.registered',
        target: 'Sender Acme (own)',
        details: { approved: false },
      },
      {
        source: 'cli',
        action: 'sender.registered',
        target: 'Sender Acme (own)',
        details: { approved: true },
      },
      {
        source: 'console',
        action: 'template.created',
        target: 'Template web-code',
        details: { purpose: 'transactional' },
      },
      {
        source: 'cli',
        action: 'template.created',
        target: 'Template cli-code',
        details: { purpose: 'transactional' },
      },
      {
        source: 'console',
        action: 'member.role_changed',
        target: `member ${viaConsole}`,
        details: { role: 'admin' },
      },
      {
        source: 'console',
        action: 'member.suspended',
        target: `member ${viaConsole}`,
        details: {},
      },
      {
        source: 'console',
        action: 'member.reactivated',
        target: `member ${viaConsole}`,
        details: {},
      },
      {
        source: 'cli',
        action: 'member.role_changed',
        target: `member ${viaCli}`,
        details: { role: 'admin' },
      },
      { source: 'cli', action: 'member.suspended', target: `member ${viaCli}`, details: {} },
      { source: 'cli', action: 'member.reactivated', target: `member ${viaCli}`, details: {} },
    ]);
  });
});
