/**
 * The OTP admin commands (credits, OTP services, templates, senders) against the real stack:
 * what each prints, a usage error each, the audit entry of a change run as the operator runs it,
 * and that a saved service's edits apply to the next send while codes already sent keep verifying
 * by request_id (docs/spec.md §4.3), even after deletion.
 */
import { randomInt } from 'node:crypto';
import { hostname, userInfo } from 'node:os';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { creditsAdd } from '../../cli/admin/credits.js';
import type { Options } from '../../cli/admin/options.js';
import {
  otpServiceCreate,
  otpServiceDelete,
  otpServiceUpdate,
} from '../../cli/admin/otp-services.js';
import { providerCreate, providerDisable } from '../../cli/admin/providers.js';
import { senderCreate, senderDelete, senderList } from '../../cli/admin/senders.js';
import {
  templateCreate,
  templateDelete,
  templateList,
  templateUpdate,
} from '../../cli/admin/templates.js';
import { UsageError } from '../../cli/output.js';
import { creditBalance } from '../../db/credits.js';
import { idColumn } from '../support/cli-table.js';
import { heraldEnv, runHeraldJson } from '../support/processes.js';
import { inbox } from '../support/send.js';
import { createTenant, openStack, type Stack, type Tenant } from '../support/stack.js';

const simulatorUrl = inject('simulatorUrl');
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

let stack: Stack;
let tenant: Tenant;
let workspace: string;

const issued = new Set<string>();
/** Fresh Australian mobiles under +6140, a prefix no other stack test draws from. */
function mobile(): string {
  for (;;) {
    const number = `+6140${String(randomInt(10_000_000)).padStart(7, '0')}`;
    if (issued.has(number)) continue;
    issued.add(number);
    return number;
  }
}

const cliEnv = () =>
  heraldEnv({ DATABASE_URL: inject('databaseUrl'), HERALD_SECRET: inject('secret') });

/** The audit entries the CLI recorded in the workspace, oldest first, as the operator who ran it. */
const cliEntries = (workspaceId: number, action: string) =>
  stack.sql`
    select action, target, details from audit_log
    where workspace_id = ${workspaceId} and source = 'cli' and action like ${action}
      and actor = ${userInfo().username} and origin = ${`cli@${hostname()}`}
    order by id`;

function api(url: string, payload: object) {
  return stack.app.inject({
    method: 'POST',
    url,
    headers: { authorization: `Bearer ${tenant.token}` },
    payload,
  });
}

beforeAll(async () => {
  stack = await openStack();
  tenant = await createTenant(stack.admin);
  workspace = tenant.slug;
  await providerCreate(stack.admin, {
    workspace,
    slug: 'sim',
    type: 'simulator',
    'base-url': simulatorUrl,
  });
  await providerCreate(stack.admin, {
    workspace,
    slug: 'retired',
    type: 'simulator',
    'base-url': simulatorUrl,
  });
  await providerDisable(stack.admin, { workspace, slug: 'retired' });
});

afterAll(async () => {
  await stack?.close();
});

describe('herald credits add', () => {
  it('adds to the balance and prints it, with a ledger row per top-up', async () => {
    const other = await createTenant(stack.admin);
    expect((await creditsAdd(stack.admin, { workspace: other.slug, amount: '5' })).json).toEqual({
      balance: 5,
    });
    expect((await creditsAdd(stack.admin, { workspace: other.slug, amount: '7' })).json).toEqual({
      balance: 12,
    });
    expect(await creditBalance(stack.sql, other.workspaceId)).toEqual({
      balance: 12,
      ledgerSum: 12,
    });
  });

  it('refuses an amount that is not a positive integer', async () => {
    for (const amount of ['0', '-3', '1.5', '1e3', 'ten']) {
      await expect(creditsAdd(stack.admin, { workspace, amount })).rejects.toThrow(
        new UsageError(`--amount "${amount}" must be a positive integer`),
      );
    }
    await expect(creditsAdd(stack.admin, { workspace })).rejects.toThrow(
      new UsageError('--amount is required'),
    );
  });

  it('prints {"balance"} with --json, and exits 2 naming the option', async () => {
    const other = await createTenant(stack.admin);
    const args = ['credits', 'add', '--workspace', other.slug, '--amount'];
    const added = await runHeraldJson([...args, '25'], cliEnv());
    expect(added.code, added.stderr).toBe(0);
    expect(added.json).toEqual({ balance: 25 });
    const refused = await runHeraldJson([...args, '0'], cliEnv());
    expect(refused.code, refused.stderr).toBe(2);
    expect(refused.json).toEqual({
      error: { type: 'UsageError', message: '--amount "0" must be a positive integer' },
    });
  });
});

describe('herald template create', () => {
  it('creates a template and prints {"id", "slug"}', async () => {
    const created = await templateCreate(stack.admin, {
      workspace,
      slug: 'login-code',
      body: 'Your login code is {code}',
    });
    expect(created.json).toEqual({ id: expect.any(Number), slug: 'login-code' });
    const [row] = await stack.sql`
      select name, body, purpose, enabled from message_templates
      where id = ${created.json.id as number}`;
    expect(row).toEqual({
      name: 'login-code',
      body: 'Your login code is {code}',
      purpose: 'transactional',
      enabled: true,
    });
  });

  it('stores --name, --purpose and --disabled', async () => {
    const created = await templateCreate(stack.admin, {
      workspace,
      slug: 'promo',
      body: 'Sale! {code}',
      name: 'Promotion',
      purpose: 'marketing',
      disabled: true,
    });
    const [row] = await stack.sql`
      select name, purpose, enabled from message_templates where id = ${created.json.id as number}`;
    expect(row).toEqual({ name: 'Promotion', purpose: 'marketing', enabled: false });
  });

  it('refuses a bad slug, an unknown purpose and a duplicate', async () => {
    await expect(
      templateCreate(stack.admin, { workspace, slug: 'Bad Slug', body: 'x' }),
    ).rejects.toThrow(
      new UsageError('--slug "Bad Slug" must be lowercase letters, digits, - or _ (at most 63)'),
    );
    await expect(
      templateCreate(stack.admin, { workspace, slug: 'x', body: 'x', purpose: 'alerts' }),
    ).rejects.toThrow(new UsageError('--purpose must be one of transactional, marketing'));
    await expect(
      templateCreate(stack.admin, { workspace, slug: 'login-code', body: 'again {code}' }),
    ).rejects.toThrow(new UsageError(`--slug: ${workspace} already has a template "login-code"`));
  });

  it('prints {"id", "slug"} with --json, and exits 2 naming the option', async () => {
    const base = ['template', 'create', '--workspace', workspace];
    const created = await runHeraldJson(
      [...base, '--slug', 'cli-made', '--body', 'Code {code}', '--disabled'],
      cliEnv(),
    );
    expect(created.code, created.stderr).toBe(0);
    expect(created.json).toEqual({ id: expect.any(Number), slug: 'cli-made' });
    const [row] = await stack.sql`
      select enabled from message_templates where id = ${created.json.id as number}`;
    expect(row).toEqual({ enabled: false });
    const refused = await runHeraldJson([...base, '--slug', 'no-body'], cliEnv());
    expect(refused.code, refused.stderr).toBe(2);
    expect(refused.json).toEqual({
      error: { type: 'UsageError', message: '--body is required' },
    });
  });
});

describe('herald sender create', () => {
  it('registers an approved sender, or a pending one with --pending', async () => {
    const approved = await senderCreate(stack.admin, {
      workspace,
      provider: 'own',
      sender: 'Herald',
    });
    expect(approved.json).toEqual({ id: expect.any(Number) });
    const pending = await senderCreate(stack.admin, {
      workspace,
      provider: 'sim',
      sender: 'Waiting',
      pending: true,
    });
    const rows = await stack.sql`
      select provider_slug, sender, approved from sender_ids
      where id in (${approved.json.id as number}, ${pending.json.id as number}) order by id`;
    expect(rows).toEqual([
      { providerSlug: 'own', sender: 'Herald', approved: true },
      { providerSlug: 'sim', sender: 'Waiting', approved: false },
    ]);
  });

  it('refuses a provider the workspace does not have and a sender over 50 characters', async () => {
    await expect(
      senderCreate(stack.admin, { workspace, provider: 'ghost', sender: 'Herald' }),
    ).rejects.toThrow(new UsageError(`--provider "ghost" is not a provider of ${workspace}`));
    await expect(
      senderCreate(stack.admin, { workspace, provider: 'own', sender: 'x'.repeat(51) }),
    ).rejects.toThrow(new UsageError('--sender must be at most 50 characters'));
  });

  it('prints {"id"} with --json, and exits 2 naming the option', async () => {
    const base = ['sender', 'create', '--workspace', workspace, '--provider'];
    const created = await runHeraldJson([...base, 'sim', '--sender', 'CliSender'], cliEnv());
    expect(created.code, created.stderr).toBe(0);
    expect(created.json).toEqual({ id: expect.any(Number) });
    const refused = await runHeraldJson([...base, 'ghost', '--sender', 'CliSender'], cliEnv());
    expect(refused.code, refused.stderr).toBe(2);
    expect(refused.json).toEqual({
      error: {
        type: 'UsageError',
        message: `--provider "ghost" is not a provider of ${workspace}`,
      },
    });
  });
});

describe('herald template list, update and delete', () => {
  let other: Tenant;
  const ISO = expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);

  beforeAll(async () => {
    other = await createTenant(stack.admin);
  });

  const template = (fields: Record<string, unknown>) => ({
    id: expect.any(Number),
    name: fields.slug,
    purpose: 'transactional',
    enabled: true,
    created_at: ISO,
    ...fields,
  });

  it('lists the templates by slug, or says there are none', async () => {
    const empty = await templateList(stack.admin, { workspace: other.slug });
    expect(empty).toEqual({ json: { templates: [] }, human: `${other.slug} has no templates` });
    const code = await templateCreate(stack.admin, {
      workspace: other.slug,
      slug: 'b-code',
      body: 'Code {code}',
    });
    const promo = await templateCreate(stack.admin, {
      workspace: other.slug,
      slug: 'a-promo',
      body: 'Sale today',
      name: 'Promotion',
      purpose: 'marketing',
      disabled: true,
    });
    const listed = await templateList(stack.admin, { workspace: other.slug });
    expect(listed.json).toEqual({
      templates: [
        template({
          id: promo.json.id,
          slug: 'a-promo',
          name: 'Promotion',
          body: 'Sale today',
          purpose: 'marketing',
          enabled: false,
        }),
        template({ id: code.json.id, slug: 'b-code', body: 'Code {code}' }),
      ],
    });
    // A table: each column as wide as its widest cell, two spaces apart.
    const id = idColumn(promo.json.id, code.json.id);
    expect(listed.human).toBe(
      [
        `${id('ID')}SLUG     NAME       PURPOSE        STATUS    BODY`,
        `${id(promo.json.id)}a-promo  Promotion  marketing      disabled  Sale today`,
        `${id(code.json.id)}b-code   b-code     transactional  enabled   Code {code}`,
      ].join('\n'),
    );
    await expect(templateList(stack.admin, { workspace: 'no-such-workspace' })).rejects.toThrow(
      new UsageError('No workspace has the slug "no-such-workspace"'),
    );
  });

  it('updates only what is given', async () => {
    await templateCreate(stack.admin, {
      workspace: other.slug,
      slug: 'welcome',
      body: 'Hi {code}',
    });
    const renamed = await templateUpdate(stack.admin, {
      workspace: other.slug,
      slug: 'welcome',
      name: 'Welcome',
      body: 'Welcome! {code}',
    });
    expect(renamed.json).toEqual(
      template({ slug: 'welcome', name: 'Welcome', body: 'Welcome! {code}' }),
    );
    expect(renamed.human).toBe(
      `Updated template welcome (id ${renamed.json.id}): Welcome, transactional, enabled: Welcome! {code} in ${other.slug}`,
    );
    const disabled = await templateUpdate(stack.admin, {
      workspace: other.slug,
      slug: 'welcome',
      enabled: 'false',
      purpose: 'marketing',
    });
    expect(disabled.json).toEqual(
      template({
        slug: 'welcome',
        name: 'Welcome',
        body: 'Welcome! {code}',
        purpose: 'marketing',
        enabled: false,
      }),
    );
  });

  it('refuses an update without settings, a bad --enabled, an unknown slug, and disabling a template an OTP service sends with', async () => {
    await templateCreate(stack.admin, {
      workspace: other.slug,
      slug: 'in-use',
      body: 'Code {code}',
    });
    await otpServiceCreate(stack.admin, {
      workspace: other.slug,
      name: 'Sign-in',
      purpose: 'login',
      template: 'in-use',
    });
    const refusals: [Options, string][] = [
      [{ slug: 'in-use' }, 'Give at least one of --name, --body, --purpose, --enabled'],
      [{ slug: 'in-use', enabled: 'no' }, '--enabled must be true or false, not "no"'],
      [{ slug: 'ghost', name: 'x' }, `--slug "ghost" is not a template of ${other.slug}`],
      [
        { slug: 'in-use', enabled: 'false' },
        '--enabled: the OTP service "Sign-in" sends with this template; change it first',
      ],
      [
        { slug: 'in-use', purpose: 'marketing' },
        '--purpose: the OTP service "Sign-in" sends with this template, which must stay transactional',
      ],
    ];
    for (const [options, message] of refusals) {
      await expect(
        templateUpdate(stack.admin, { workspace: other.slug, ...options }),
      ).rejects.toThrow(new UsageError(message));
    }
  });

  it('deletes a template once; one an OTP service sends with is refused', async () => {
    await templateCreate(stack.admin, { workspace: other.slug, slug: 'spare', body: 'x' });
    expect(await templateDelete(stack.admin, { workspace: other.slug, slug: 'spare' })).toEqual({
      json: { slug: 'spare', deleted: true },
      human: `Deleted template spare from ${other.slug}`,
    });
    await expect(
      templateDelete(stack.admin, { workspace: other.slug, slug: 'spare' }),
    ).rejects.toThrow(new UsageError(`--slug "spare" is not a template of ${other.slug}`));
    await expect(
      templateDelete(stack.admin, { workspace: other.slug, slug: 'in-use' }),
    ).rejects.toThrow(
      new UsageError('The OTP service "Sign-in" sends with the template "in-use"; change it first'),
    );
  });

  it('prints one JSON object each with --json, records the changes in the audit log, and exits 2 naming the option', async () => {
    const base = ['--workspace', other.slug];
    await templateCreate(stack.admin, {
      workspace: other.slug,
      slug: 'cli-edit',
      body: 'A {code}',
    });
    const listed = await runHeraldJson(['template', 'list', ...base], cliEnv());
    expect(listed.code, listed.stderr).toBe(0);
    expect((listed.json.templates as { slug: string }[]).map((row) => row.slug)).toContain(
      'cli-edit',
    );
    const updated = await runHeraldJson(
      ['template', 'update', ...base, '--slug', 'cli-edit', '--enabled', 'false'],
      cliEnv(),
    );
    expect(updated.code, updated.stderr).toBe(0);
    expect(updated.json).toEqual(template({ slug: 'cli-edit', body: 'A {code}', enabled: false }));
    const deleted = await runHeraldJson(
      ['template', 'delete', ...base, '--slug', 'cli-edit'],
      cliEnv(),
    );
    expect(deleted.code, deleted.stderr).toBe(0);
    expect(deleted.json).toEqual({ slug: 'cli-edit', deleted: true });
    const gone = await runHeraldJson(
      ['template', 'delete', ...base, '--slug', 'cli-edit'],
      cliEnv(),
    );
    expect(gone.code, gone.stderr).toBe(2);
    expect(gone.json).toEqual({
      error: {
        type: 'UsageError',
        message: `--slug "cli-edit" is not a template of ${other.slug}`,
      },
    });
    expect(await cliEntries(other.workspaceId, 'template.%')).toEqual([
      {
        action: 'template.updated',
        target: 'Template cli-edit',
        details: { purpose: 'transactional', enabled: false },
      },
      { action: 'template.deleted', target: 'Template cli-edit', details: {} },
    ]);
  });
});

describe('herald sender list and delete', () => {
  let other: Tenant;

  beforeAll(async () => {
    other = await createTenant(stack.admin);
    await providerCreate(stack.admin, {
      workspace: other.slug,
      slug: 'sim',
      type: 'simulator',
      'base-url': simulatorUrl,
    });
  });

  it('lists the senders by provider, then sender, or says there are none', async () => {
    expect(await senderList(stack.admin, { workspace: other.slug })).toEqual({
      json: { senders: [] },
      human: `${other.slug} has no sender ids`,
    });
    const own = await senderCreate(stack.admin, {
      workspace: other.slug,
      provider: 'own',
      sender: 'Herald',
    });
    const pending = await senderCreate(stack.admin, {
      workspace: other.slug,
      provider: 'sim',
      sender: 'Acme',
      pending: true,
    });
    const listed = await senderList(stack.admin, { workspace: other.slug });
    const ISO = expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
    expect(listed.json).toEqual({
      senders: [
        {
          id: own.json.id,
          provider_slug: 'own',
          sender: 'Herald',
          approved: true,
          created_at: ISO,
        },
        {
          id: pending.json.id,
          provider_slug: 'sim',
          sender: 'Acme',
          approved: false,
          created_at: ISO,
        },
      ],
    });
    const id = idColumn(own.json.id, pending.json.id);
    expect(listed.human).toBe(
      [
        `${id('ID')}SENDER  PROVIDER  STATUS`,
        `${id(own.json.id)}Herald  own       approved`,
        `${id(pending.json.id)}Acme    sim       pending approval`,
      ].join('\n'),
    );
  });

  it("deletes a sender once; one an OTP service sends from, a bad id and another workspace's are refused", async () => {
    const { id } = (
      await senderCreate(stack.admin, { workspace: other.slug, provider: 'sim', sender: 'Spare' })
    ).json as { id: number };
    expect(await senderDelete(stack.admin, { workspace: other.slug, id: String(id) })).toEqual({
      json: { id, sender: 'Spare', provider_slug: 'sim', deleted: true },
      human: `Deleted sender "Spare" of sim from ${other.slug}`,
    });
    await expect(
      senderDelete(stack.admin, { workspace: other.slug, id: String(id) }),
    ).rejects.toThrow(new UsageError(`${other.slug} has no sender id ${id}`));
    await expect(senderDelete(stack.admin, { workspace: other.slug, id: 'x1' })).rejects.toThrow(
      new UsageError('--id "x1" is not a sender id'),
    );
    const { id: used } = (
      await senderCreate(stack.admin, { workspace: other.slug, provider: 'sim', sender: 'InUse' })
    ).json as { id: number };
    await otpServiceCreate(stack.admin, {
      workspace: other.slug,
      name: 'Checkout',
      purpose: 'checkout',
      'sender-id': 'InUse',
      provider: 'sim',
    });
    await expect(
      senderDelete(stack.admin, { workspace: other.slug, id: String(used) }),
    ).rejects.toThrow(
      new UsageError('The OTP service "Checkout" sends from "InUse" through sim; change it first'),
    );
    // The id exists, but in another workspace.
    await expect(senderDelete(stack.admin, { workspace, id: String(used) })).rejects.toThrow(
      new UsageError(`${workspace} has no sender id ${used}`),
    );
  });

  it('prints one JSON object each with --json, records the delete in the audit log, and exits 2 naming the option', async () => {
    const base = ['--workspace', other.slug];
    const { id } = (
      await senderCreate(stack.admin, { workspace: other.slug, provider: 'sim', sender: 'CliGone' })
    ).json as { id: number };
    const listed = await runHeraldJson(['sender', 'list', ...base], cliEnv());
    expect(listed.code, listed.stderr).toBe(0);
    expect(listed.json.senders).toContainEqual(
      expect.objectContaining({ id, provider_slug: 'sim', sender: 'CliGone', approved: true }),
    );
    const deleted = await runHeraldJson(
      ['sender', 'delete', ...base, '--id', String(id)],
      cliEnv(),
    );
    expect(deleted.code, deleted.stderr).toBe(0);
    expect(deleted.json).toEqual({ id, sender: 'CliGone', provider_slug: 'sim', deleted: true });
    const refused = await runHeraldJson(['sender', 'delete', ...base], cliEnv());
    expect(refused.code, refused.stderr).toBe(2);
    expect(refused.json).toEqual({ error: { type: 'UsageError', message: '--id is required' } });
    expect(await cliEntries(other.workspaceId, 'sender.deleted')).toEqual([
      { action: 'sender.deleted', target: 'Sender CliGone (sim)', details: {} },
    ]);
  });
});

describe('herald otp-service create, update and delete', () => {
  const create = (options: Options) =>
    otpServiceCreate(stack.admin, { workspace, name: 'Login', purpose: 'login', ...options });

  beforeAll(async () => {
    await templateCreate(stack.admin, { workspace, slug: 'svc-code', body: 'Code is {code}' });
    await templateCreate(stack.admin, {
      workspace,
      slug: 'svc-promo',
      body: 'Sale {code}',
      purpose: 'marketing',
    });
    await templateCreate(stack.admin, {
      workspace,
      slug: 'off',
      body: 'Code {code}',
      disabled: true,
    });
    await templateCreate(stack.admin, {
      workspace,
      slug: 'long',
      body: `${'x'.repeat(153)} {code}`,
    });
    await senderCreate(stack.admin, { workspace, provider: 'own', sender: 'OwnOnly' });
    await senderCreate(stack.admin, { workspace, provider: 'sim', sender: 'SimOnly' });
    await senderCreate(stack.admin, {
      workspace,
      provider: 'sim',
      sender: 'SimPending',
      pending: true,
    });
  });

  it('creates a service with the API defaults and prints its slug and settings', async () => {
    expect((await create({})).json).toEqual({
      slug: expect.stringMatching(UUID),
      name: 'Login',
      purpose: 'login',
      code_length: 6,
      expires_in_minutes: 5,
      template_slug: null,
      message_template: null,
      sender_id: null,
      provider_slug: null,
    });
  });

  it('creates a service with every setting', async () => {
    const created = await create({
      purpose: 'checkout:confirm',
      'code-length': '8',
      'expires-in-minutes': '10',
      template: 'svc-code',
      'sender-id': 'SimOnly',
      provider: 'sim',
    });
    expect(created.json).toEqual({
      slug: expect.stringMatching(UUID),
      name: 'Login',
      purpose: 'checkout:confirm',
      code_length: 8,
      expires_in_minutes: 10,
      template_slug: 'svc-code',
      message_template: null,
      sender_id: 'SimOnly',
      provider_slug: 'sim',
    });
  });

  const refusals: [string, Options, string][] = [
    ['no name', { name: undefined }, '--name is required'],
    ['no purpose', { purpose: undefined }, '--purpose is required'],
    [
      'a purpose with a space',
      { purpose: 'log in' },
      '--purpose "log in" must be up to 100 letters, digits, ".", "_", ":" or "-"',
    ],
    [
      'a purpose over 100 characters',
      { purpose: 'p'.repeat(101) },
      `--purpose "${'p'.repeat(101)}" must be up to 100 letters, digits, ".", "_", ":" or "-"`,
    ],
    ['code length 5', { 'code-length': '5' }, '--code-length must be an integer from 6 to 8'],
    ['code length 9', { 'code-length': '9' }, '--code-length must be an integer from 6 to 8'],
    ['code length 6.5', { 'code-length': '6.5' }, '--code-length must be an integer from 6 to 8'],
    [
      'a lifetime of 0 minutes',
      { 'expires-in-minutes': '0' },
      '--expires-in-minutes must be an integer from 1 to 10',
    ],
    [
      'a lifetime of 11 minutes',
      { 'expires-in-minutes': '11' },
      '--expires-in-minutes must be an integer from 1 to 10',
    ],
    [
      'both message sources',
      { template: 'svc-code', 'message-template': 'Code {code}' },
      '--template and --message-template are exclusive',
    ],
    [
      'a message template without {code}',
      { 'message-template': 'Your code' },
      '--message-template: the message template must contain {code} exactly once',
    ],
    [
      'a message template with {code} twice',
      { 'message-template': '{code} {code}' },
      '--message-template: the message template must contain {code} exactly once',
    ],
    [
      'a message template with another placeholder',
      { 'message-template': 'Hi {name}, {code}' },
      '--message-template: the message template may not contain placeholders other than {code}',
    ],
    [
      'a message template longer than one segment',
      { 'message-template': `${'x'.repeat(154)} {code}` },
      '--message-template: the message template must fit in one SMS segment with the code',
    ],
    [
      'a template that does not fit with the code length',
      { template: 'long', 'code-length': '8' },
      '--template: the template "long" must fit in one SMS segment with the code',
    ],
    [
      'an unknown template',
      { template: 'ghost' },
      '--template "ghost" is not a template of WORKSPACE',
    ],
    ['a disabled template', { template: 'off' }, '--template "off" is disabled in WORKSPACE'],
    [
      'a marketing template',
      { template: 'svc-promo' },
      '--template "svc-promo" is not a transactional template',
    ],
    [
      'an unknown provider',
      { provider: 'ghost' },
      '--provider "ghost" is not a provider of WORKSPACE',
    ],
    [
      'a disabled provider',
      { provider: 'retired' },
      '--provider "retired" is disabled in WORKSPACE',
    ],
    [
      'a sender over 50 characters',
      { 'sender-id': 's'.repeat(51) },
      '--sender-id must be at most 50 characters',
    ],
    [
      'a sender not approved for the provider',
      { 'sender-id': 'SimOnly' },
      '--sender-id: "SimOnly" is not an approved sender of provider own in WORKSPACE',
    ],
    [
      'a pending sender',
      { 'sender-id': 'SimPending', provider: 'sim' },
      '--sender-id: "SimPending" is not an approved sender of provider sim in WORKSPACE',
    ],
  ];
  it.each(refusals)('refuses %s', async (_case, options, message) => {
    await expect(create(options)).rejects.toThrow(
      new UsageError(message.replaceAll('WORKSPACE', workspace)),
    );
  });

  it('updates only the given settings; one message source replaces the other', async () => {
    const { slug } = (await create({ 'message-template': 'Code: {code}', provider: 'sim' }))
      .json as { slug: string };
    const updated = await otpServiceUpdate(stack.admin, {
      workspace,
      slug,
      'code-length': '7',
      'sender-id': 'SimOnly',
    });
    expect(updated.json).toEqual({
      slug,
      name: 'Login',
      purpose: 'login',
      code_length: 7,
      expires_in_minutes: 5,
      template_slug: null,
      message_template: 'Code: {code}',
      sender_id: 'SimOnly',
      provider_slug: 'sim',
    });
    const switched = await otpServiceUpdate(stack.admin, { workspace, slug, template: 'svc-code' });
    expect(switched.json).toMatchObject({ template_slug: 'svc-code', message_template: null });
  });

  it('checks an update against the settings it keeps', async () => {
    const { slug } = (await create({ template: 'long' })).json as { slug: string };
    await expect(
      otpServiceUpdate(stack.admin, { workspace, slug, 'code-length': '8' }),
    ).rejects.toThrow(
      new UsageError(
        '--code-length: the template "long" must fit in one SMS segment with the code',
      ),
    );
  });

  it('refuses an update without settings, of a bad slug or of another workspace', async () => {
    const { slug } = (await create({})).json as { slug: string };
    await expect(otpServiceUpdate(stack.admin, { workspace, slug })).rejects.toThrow(
      new UsageError(
        'Give at least one of --name, --purpose, --code-length, --expires-in-minutes, --template, --message-template, --sender-id, --provider',
      ),
    );
    await expect(
      otpServiceUpdate(stack.admin, { workspace, slug: 'login', name: 'x' }),
    ).rejects.toThrow(new UsageError('--slug "login" is not an OTP service slug (UUID)'));
    const other = await createTenant(stack.admin);
    await expect(
      otpServiceUpdate(stack.admin, { workspace: other.slug, slug, name: 'Stolen' }),
    ).rejects.toThrow(new UsageError(`--slug "${slug}" is not an OTP service of ${other.slug}`));
  });

  it('deletes a service once', async () => {
    const { slug } = (await create({})).json as { slug: string };
    expect((await otpServiceDelete(stack.admin, { workspace, slug })).json).toEqual({
      slug,
      deleted: true,
    });
    await expect(otpServiceDelete(stack.admin, { workspace, slug })).rejects.toThrow(
      new UsageError(`--slug "${slug}" is not an OTP service of ${workspace}`),
    );
  });

  it('prints one JSON object for each subcommand, and exits 2 naming the option', async () => {
    const base = ['--workspace', workspace];
    const created = await runHeraldJson(
      [
        'otp-service',
        'create',
        ...base,
        '--name',
        'From the CLI',
        '--purpose',
        'signup',
        '--message-template',
        'Welcome! Your code: {code}',
      ],
      cliEnv(),
    );
    expect(created.code, created.stderr).toBe(0);
    const slug = created.json.slug as string;
    expect(created.json).toEqual({
      slug: expect.stringMatching(UUID),
      name: 'From the CLI',
      purpose: 'signup',
      code_length: 6,
      expires_in_minutes: 5,
      template_slug: null,
      message_template: 'Welcome! Your code: {code}',
      sender_id: null,
      provider_slug: null,
    });
    const updated = await runHeraldJson(
      ['otp-service', 'update', ...base, '--slug', slug, '--expires-in-minutes', '3'],
      cliEnv(),
    );
    expect(updated.code, updated.stderr).toBe(0);
    expect(updated.json).toEqual({ ...created.json, expires_in_minutes: 3 });
    const refused = await runHeraldJson(
      ['otp-service', 'update', ...base, '--slug', slug, '--code-length', '9'],
      cliEnv(),
    );
    expect(refused.code, refused.stderr).toBe(2);
    expect(refused.json).toEqual({
      error: { type: 'UsageError', message: '--code-length must be an integer from 6 to 8' },
    });
    const deleted = await runHeraldJson(
      ['otp-service', 'delete', ...base, '--slug', slug],
      cliEnv(),
    );
    expect(deleted.code, deleted.stderr).toBe(0);
    expect(deleted.json).toEqual({ slug, deleted: true });
    const gone = await runHeraldJson(['otp-service', 'delete', ...base, '--slug', slug], cliEnv());
    expect(gone.code, gone.stderr).toBe(2);
    expect(gone.json).toEqual({
      error: {
        type: 'UsageError',
        message: `--slug "${slug}" is not an OTP service of ${workspace}`,
      },
    });
  });
});

describe('a saved service and the codes sent with it (docs/spec.md §4.3)', () => {
  it('applies an edit to the next send, and earlier codes verify by request_id after edit and deletion', async () => {
    await creditsAdd(stack.admin, { workspace, amount: '10' });
    await senderCreate(stack.admin, { workspace, provider: 'own', sender: 'Herald' });
    const { slug } = (
      await otpServiceCreate(stack.admin, {
        workspace,
        name: 'Sign-in',
        purpose: 'signin',
        'message-template': 'Sign-in code {code}',
        'sender-id': 'Herald',
      })
    ).json as { slug: string };

    const before = mobile();
    const first = await api('/api/v1/otp/send', { recipient: before, service_slug: slug });
    expect(first.statusCode).toBe(202);
    expect(first.json().data).toMatchObject({
      status: 'accepted',
      provider: 'own',
      sender_id: 'Herald',
    });
    const firstLifetime = Date.parse(first.json().data.expires_at) - Date.now();
    expect(firstLifetime).toBeGreaterThan(4 * 60_000);
    const [firstMessage] = await inbox(simulatorUrl, before);
    expect(firstMessage).toMatchObject({ from: 'Herald' });
    expect(firstMessage?.body).toMatch(/^Sign-in code \d{6}$/);
    const firstCode = firstMessage?.body.slice(-6) as string;

    await otpServiceUpdate(stack.admin, {
      workspace,
      slug,
      'code-length': '8',
      'expires-in-minutes': '2',
      'message-template': 'New code: {code}',
    });
    const after = mobile();
    const second = await api('/api/v1/otp/send', { recipient: after, service_slug: slug });
    expect(second.statusCode).toBe(202);
    const secondLifetime = Date.parse(second.json().data.expires_at) - Date.now();
    expect(secondLifetime).toBeGreaterThan(60_000);
    expect(secondLifetime).toBeLessThanOrEqual(2 * 60_000);
    const [secondMessage] = await inbox(simulatorUrl, after);
    expect(secondMessage?.body).toMatch(/^New code: \d{8}$/);
    const secondCode = secondMessage?.body.slice(-8) as string;

    await otpServiceDelete(stack.admin, { workspace, slug });
    const afterDeletion = await api('/api/v1/otp/send', {
      recipient: mobile(),
      service_slug: slug,
    });
    expect(afterDeletion.statusCode).toBe(422);
    expect(afterDeletion.json()).toEqual({
      message: 'The selected service slug is invalid.',
      errors: { service_slug: ['The selected service slug is invalid.'] },
    });

    for (const [recipient, code, sent] of [
      [before, firstCode, first],
      [after, secondCode, second],
    ] as const) {
      const verified = await api('/api/v1/otp/verify', {
        recipient,
        code,
        request_id: sent.json().data.request_id,
      });
      expect(verified.statusCode).toBe(200);
      expect(verified.json()).toEqual({ message: 'The code is verified.' });
    }
  });
});
