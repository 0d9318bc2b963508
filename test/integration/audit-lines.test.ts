/**
 * The lines the use-cases write, as the Audit page shows them: a console member's with their
 * user id, the browser's address and user agent (signing in, switching workspace, a setting,
 * signing out; an invitation accepted by the person who joins, in the workspace they join; a
 * sender id asked for); a CLI command's, run as an operator runs it (`bin/herald.js … --json`, or
 * runAsOperator as it does), with the OS user as the actor, source `cli` and `cli@<hostname>`,
 * and none for a command that fails or changes nothing; never a password or a token.
 */
import { randomBytes } from 'node:crypto';
import { hostname, userInfo } from 'node:os';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { ADMIN_COMMANDS } from '../../cli/admin/index.js';
import type { Options } from '../../cli/admin/options.js';
import { runAsOperator } from '../../cli/context.js';
import { createInvitation } from '../../commands/team/invitations.js';
import { addUser } from '../../commands/team/users.js';
import { createWorkspace } from '../../commands/team/workspaces.js';
import { TEST_OPERATOR } from '../support/actors.js';
import { ConsoleBrowser, openConsoleApp, visibleText } from '../support/console.js';
import { heraldEnv, runHerald, runHeraldJson } from '../support/processes.js';

let server: Awaited<ReturnType<typeof openConsoleApp>>;
const PASSWORD = 'correct horse 1';
/** What light-my-request sends as the browser's user agent. */
const USER_AGENT = 'lightMyRequest';

beforeAll(async () => {
  server = await openConsoleApp();
});
afterAll(() => server.close());

async function workspace() {
  const slug = `l-${randomBytes(5).toString('hex')}`;
  const { id } = await createWorkspace(server.deps, { name: `Lines ${slug}`, slug }, TEST_OPERATOR);
  return { slug, id };
}

const linesOf = (email: string) =>
  server.sql`
    select a.workspace_id, a.user_id = u.id as by_user, a.actor, a.source, a.action, a.target,
           a.details, host(a.address) as address, a.user_agent, a.origin
    from audit_log a join users u on lower(u.email) = lower(${email})
    where a.actor = ${email} order by a.id`;

describe('audit lines of console members', () => {
  it('records signing in, switching workspace, a setting and signing out, from the browser', async () => {
    const [first, second] = [await workspace(), await workspace()];
    const email = `owner@${first.slug}.test`;
    for (const { slug } of [first, second])
      await addUser(
        server.deps,
        { workspace: slug, email, password: PASSWORD, role: 'owner' },
        TEST_OPERATOR,
      );
    const browser = new ConsoleBrowser(server.app);
    expect((await browser.signIn(email, PASSWORD)).status).toBe(303);
    const visitor = (await linesOf(email))[0]?.workspaceId;
    const [signedInTo, other] = visitor === first.id ? [first, second] : [second, first];
    await browser.get('/console/workspaces');
    expect((await browser.post('/console/workspaces', { workspace: other.slug })).status).toBe(303);
    await browser.get('/console/profile');
    const optional = await browser.post(`/console/w/${other.slug}/security/second-factor`, {
      required: 'false',
    });
    expect(optional.status).toBe(303);
    await browser.get('/console/profile');
    expect((await browser.post('/console/sign-out', {})).status).toBe(303);

    const fromBrowser = {
      byUser: true,
      actor: email,
      source: 'console',
      address: browser.address,
      userAgent: USER_AGENT,
      origin: null,
    };
    expect(await linesOf(email)).toEqual([
      {
        ...fromBrowser,
        workspaceId: signedInTo.id,
        action: 'session.signed_in',
        target: null,
        details: {},
      },
      {
        ...fromBrowser,
        workspaceId: other.id,
        action: 'session.switched_workspace',
        target: `workspace ${other.slug}`,
        details: { from: signedInTo.slug },
      },
      {
        ...fromBrowser,
        workspaceId: other.id,
        action: 'workspace.second_factor_optional',
        target: `workspace ${other.slug}`,
        details: {},
      },
      {
        ...fromBrowser,
        workspaceId: other.id,
        action: 'session.signed_out',
        target: null,
        details: {},
      },
    ]);
  });

  it('records an invitation accepted by the person who joins, and the Audit page shows it', async () => {
    const team = await workspace();
    const owner = `owner@${team.slug}.test`;
    await addUser(
      server.deps,
      { workspace: team.slug, email: owner, password: PASSWORD, role: 'owner' },
      TEST_OPERATOR,
    );
    const email = `new@${team.slug}.test`;
    const { id, token } = await createInvitation(
      server.deps,
      { workspace: team.slug, email, role: 'developer' },
      TEST_OPERATOR,
    );
    const browser = new ConsoleBrowser(server.app);
    await browser.get(`/console/invitations/${token}`);
    const accepted = await browser.post(`/console/invitations/${token}`, {
      password: PASSWORD,
      password_confirmation: PASSWORD,
    });
    expect(accepted.status).toBe(303);
    expect(await linesOf(email)).toEqual([
      {
        workspaceId: team.id,
        byUser: true,
        actor: email,
        source: 'console',
        action: 'invitation.accepted',
        target: `member ${email}`,
        details: { role: 'developer', invitation_id: id },
        address: browser.address,
        userAgent: USER_AGENT,
        origin: null,
      },
    ]);
    expect(JSON.stringify(await linesOf(email))).not.toContain(PASSWORD);

    const ownerBrowser = new ConsoleBrowser(server.app);
    expect((await ownerBrowser.signIn(owner, PASSWORD)).status).toBe(303);
    const page = visibleText((await ownerBrowser.get(`/console/w/${team.slug}/audit`)).body);
    // Postgres keeps jsonb keys shortest first.
    expect(page).toContain(
      `${email} invitation.accepted member ${email} role: developer · invitation_id: ${id} ${browser.address}`,
    );
  });

  it('records a sender id asked for on the OTP senders page, by the member who asked', async () => {
    const team = await workspace();
    const email = `owner@${team.slug}.test`;
    await addUser(
      server.deps,
      { workspace: team.slug, email, password: PASSWORD, role: 'owner' },
      TEST_OPERATOR,
    );
    const browser = new ConsoleBrowser(server.app);
    expect((await browser.signIn(email, PASSWORD)).status).toBe(303);
    await browser.get(`/console/w/${team.slug}/otp-senders`);
    const asked = await browser.post(`/console/w/${team.slug}/otp-senders`, {
      provider: 'own',
      sender: 'Acme',
    });
    expect(asked.status).toBe(201);
    const lines = await linesOf(email);
    expect(lines.filter((line) => line.action !== 'session.signed_in')).toEqual([
      {
        workspaceId: team.id,
        byUser: true,
        actor: email,
        source: 'console',
        action: 'sender.registered',
        target: 'Sender Acme (own)',
        // The operator's own provider: the sender waits for their approval.
        details: { approved: false },
        address: browser.address,
        userAgent: USER_AGENT,
        origin: null,
      },
    ]);
  });
});

const OPERATOR = userInfo().username;
const ORIGIN = `cli@${hostname()}`;

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

describe('audit lines of CLI commands', () => {
  const fromCli = { source: 'cli', actor: OPERATOR, origin: ORIGIN };
  const noBrowser = { address: null, userAgent: null, userId: null };

  it('records each change with who, what and from where, and the Audit page lists them', async () => {
    const slug = `a-${randomBytes(5).toString('hex')}`;
    const email = `owner@${slug}.test`;
    const created = await herald('workspace', 'create', '--name', 'Audited', '--slug', slug);
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
    // Already revoked: the command says so and records nothing more.
    expect(await herald('key', 'revoke', '--id', String(key.id))).toEqual({
      id: key.id,
      revoked: true,
      already_revoked: true,
    });
    // Read-only: not recorded.
    await herald('member', 'list', '--workspace', slug);

    const entries = await entriesOf(created.id as number);
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
    const created = await herald('workspace', 'create', '--name', 'Refused', '--slug', slug);
    const refused = await runHerald(
      ['credits', 'add', '--workspace', slug, '--amount', 'lots', '--json'],
      cliEnv(),
    );
    expect(refused.code).toBe(2);
    expect(JSON.parse(refused.stdout)).toEqual({
      error: { type: 'UsageError', message: '--amount "lots" must be a positive integer' },
    });
    const entries = await entriesOf(created.id as number);
    expect(entries.map((entry) => entry.action)).toEqual(['workspace.created']);
  });
});

/** Runs a command as `herald` does (cli/main.ts): through runAsOperator, by the OS user. */
function asOperator(name: string, options: Options) {
  const command = ADMIN_COMMANDS.find((candidate) => candidate.name === name);
  if (!command) throw new Error(`no command ${name}`);
  return runAsOperator(server.deps, command, options);
}

describe('audit lines of the OTP, template, sender, credits, guard and erasure commands', () => {
  it('records every change, each by the operator who ran the command', async () => {
    const { slug, id } = await workspace();
    const w = { workspace: slug };
    const [before] = await server.sql<{ id: number }[]>`
      select coalesce(max(id), 0)::int as id from audit_log where workspace_id = ${id}`;

    await asOperator('credits add', { ...w, amount: '25' });
    await asOperator('template create', { ...w, slug: 'code', body: 'Your code is {code}' });
    await asOperator('template update', { ...w, slug: 'code', name: 'Code' });
    const sender = await asOperator('sender create', {
      ...w,
      provider: 'own',
      sender: 'Acme',
      pending: true,
    });
    const created = await asOperator('otp-service create', {
      ...w,
      name: 'Sign-in',
      purpose: 'login',
      template: 'code',
    });
    const service = String(created.json.slug);
    await asOperator('otp-service update', { ...w, slug: service, name: 'Log-in' });
    await asOperator('guard set', { ...w, 'key-rate': '50/s' });
    // A range the breaker blocked, as it leaves one.
    const range = `+6141${String(Math.floor(Math.random() * 1e5)).padStart(5, '0')}`;
    await server.sql`
      insert into guard_blocked_ranges (workspace_id, range, blocked_until, sends, verified)
      values (${id}, ${range}, now() + interval '1 hour', 3, 0)`;
    await asOperator('guard unblock', { ...w, range });
    await asOperator('otp-service delete', { ...w, slug: service });
    await asOperator('template delete', { ...w, slug: 'code' });
    await asOperator('sender delete', { ...w, id: String(sender.json.id) });
    await server.sql`insert into opt_outs (workspace_id, recipient) values (${id}, '+61412345678')`;
    await asOperator('recipient erase', { ...w, number: '+61412345678' });

    const lines = await server.sql`
      select actor, source, origin, user_id, address, user_agent, action, target, details
      from audit_log where workspace_id = ${id} and id > ${before?.id ?? 0} order by id`;
    const byOperator = {
      actor: OPERATOR,
      source: 'cli',
      origin: ORIGIN,
      userId: null,
      address: null,
      userAgent: null,
    };
    expect(lines).toEqual(
      [
        {
          action: 'credits.added',
          target: `workspace ${slug}`,
          details: { amount: 25, balance: 25 },
        },
        {
          action: 'template.created',
          target: 'Template code',
          details: { purpose: 'transactional' },
        },
        {
          action: 'template.updated',
          target: 'Template code',
          details: { purpose: 'transactional', enabled: true },
        },
        { action: 'sender.registered', target: 'Sender Acme (own)', details: { approved: false } },
        {
          action: 'otp_service.created',
          target: 'OTP service Sign-in',
          details: { slug: service },
        },
        { action: 'otp_service.updated', target: 'OTP service Log-in', details: { slug: service } },
        { action: 'guard.updated', target: `workspace ${slug}`, details: { key_rate: '50/s' } },
        { action: 'guard.range_unblocked', target: `range ${range}`, details: { range } },
        { action: 'otp_service.deleted', target: `OTP service ${service}`, details: {} },
        { action: 'template.deleted', target: 'Template code', details: {} },
        { action: 'sender.deleted', target: 'Sender Acme (own)', details: {} },
        {
          action: 'recipient.erased',
          target: 'recipient •••• 5678',
          details: { opt_outs_hashed: 1 },
        },
      ].map((line) => ({ ...byOperator, ...line })),
    );
    const [lifted] = await server.sql`
      select lifted_by from guard_blocked_ranges where workspace_id = ${id} and range = ${range}`;
    expect(lifted?.liftedBy).toBe(OPERATOR);
  });
});
