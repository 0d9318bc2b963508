/**
 * `herald opt-out list|remove`: the console's Opt-outs page for the operator, on the same
 * use-cases. The list (numbers in full, newest first) as a table and as JSON, filtered by source
 * and by number; a removal gone from the list with its exact `opt_out.removed` audit line by the
 * operator; every refusal's one line and exit code, through the real `herald` binary.
 */
import { hostname, userInfo } from 'node:os';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { ADMIN_COMMANDS } from '../../cli/admin/index.js';
import type { Options } from '../../cli/admin/options.js';
import { runAsOperator } from '../../cli/context.js';
import { UsageError } from '../../cli/output.js';
import { eraseRecipientNumber } from '../../commands/messaging/recipient-erasure.js';
import { optOut } from '../../db/opt-outs.js';
import { TEST_OPERATOR } from '../support/actors.js';
import { columnOf, idColumn } from '../support/cli-table.js';
import { heraldEnv, runHerald, runHeraldJson } from '../support/processes.js';
import { createTenant, openStack, type Stack, type Tenant } from '../support/stack.js';

let stack: Stack;

const cliEnv = () =>
  heraldEnv({ DATABASE_URL: inject('databaseUrl'), HERALD_SECRET: inject('secret') });
const ISO = expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
/** A stored time as tables and sentences show it: UTC to the second. */
const utc = (iso: unknown) => String(iso).slice(0, 19).replace('T', ' ');

/** Runs a command as `herald` does: by the operator, its use-cases auditing what it changes. */
async function operator(name: string, options: Options) {
  const command = ADMIN_COMMANDS.find((candidate) => candidate.name === name);
  if (!command) throw new Error(`no command ${name}`);
  return runAsOperator(stack.admin, command, options);
}

interface Listed {
  id: number;
  number: string | null;
  erased: boolean;
  source: string;
  created_at: string;
}

const listed = async (tenant: Tenant, options: Options = {}) =>
  (await operator('opt-out list', { workspace: tenant.slug, ...options })).json
    .opt_outs as Listed[];

/** A workspace whose numbers opted out by STOP reply and by link, oldest first. */
async function seeded() {
  const tenant = await createTenant(stack.admin);
  await optOut(stack.sql, tenant.workspaceId, '+61412555011', 'reply');
  await optOut(stack.sql, tenant.workspaceId, '+61412555022', 'link');
  await optOut(stack.sql, tenant.workspaceId, '+61412666033', 'reply');
  return tenant;
}

/** The workspace's audit lines of removed opt-outs, checked to be the operator's. */
async function removalLines(workspaceId: number) {
  const rows = await stack.sql<
    {
      action: string;
      target: string;
      details: unknown;
      source: string;
      actor: string;
      origin: string;
    }[]
  >`
    select action, target, details, source, actor, origin from audit_log
    where workspace_id = ${workspaceId} and action = 'opt_out.removed'
    order by id`;
  for (const row of rows) {
    expect(row.source).toBe('cli');
    expect(row.actor).toBe(userInfo().username);
    expect(row.origin).toBe(`cli@${hostname()}`);
  }
  return rows.map(({ source: _source, actor: _actor, origin: _origin, ...line }) => line);
}

beforeAll(async () => {
  stack = await openStack();
});

afterAll(() => stack?.close());

describe('herald opt-out list', () => {
  it('prints every opt-out newest first, numbers in full, as a table and as JSON', async () => {
    const tenant = await seeded();
    const rows = await listed(tenant);
    expect(rows).toEqual([
      {
        id: expect.any(Number),
        number: '+61412666033',
        erased: false,
        source: 'reply',
        created_at: ISO,
      },
      {
        id: expect.any(Number),
        number: '+61412555022',
        erased: false,
        source: 'link',
        created_at: ISO,
      },
      {
        id: expect.any(Number),
        number: '+61412555011',
        erased: false,
        source: 'reply',
        created_at: ISO,
      },
    ]);

    const env = cliEnv();
    const table = await runHerald(['opt-out', 'list', '--workspace', tenant.slug], env);
    expect(table.code, table.stderr).toBe(0);
    const id = idColumn(...rows.map((row) => row.id));
    const number = columnOf('NUMBER', '+61412666033');
    const source = columnOf('SOURCE', 'reply');
    expect(table.stdout).toBe(
      [
        `${id('ID')}${number('NUMBER')}${source('SOURCE')}OPTED OUT (UTC)`,
        ...rows.map(
          (row) => `${id(row.id)}${number(row.number)}${source(row.source)}${utc(row.created_at)}`,
        ),
        '',
      ].join('\n'),
    );
    const json = await runHeraldJson(['opt-out', 'list', '--workspace', tenant.slug], env);
    expect(json.code, json.stderr).toBe(0);
    expect(json.json).toEqual({ opt_outs: rows });

    const help = await runHerald(['help'], env);
    expect(help.stdout).toContain(
      '  opt-out list --workspace <slug> [--number <digits|+E.164>] [--source link|reply|operator]\n',
    );
    expect(help.stdout).toContain('  opt-out remove --workspace <slug> --number <E.164>\n');
  });

  it('filters by source, by part of a number or the whole of one, and by both', async () => {
    const tenant = await seeded();
    const numbers = async (options: Options) =>
      (await listed(tenant, options)).map((row) => row.number);
    expect(await numbers({ source: 'link' })).toEqual(['+61412555022']);
    expect(await numbers({ source: 'reply' })).toEqual(['+61412666033', '+61412555011']);
    expect(await numbers({ source: 'operator' })).toEqual([]);
    expect(await numbers({ number: '555' })).toEqual(['+61412555022', '+61412555011']);
    expect(await numbers({ number: '+61 412 666-033' })).toEqual(['+61412666033']);
    expect(await numbers({ number: '61412555011' })).toEqual(['+61412555011']);
    expect(await numbers({ number: '555', source: 'reply' })).toEqual(['+61412555011']);

    const filtered = await runHeraldJson(
      ['opt-out', 'list', '--workspace', tenant.slug, '--source', 'link'],
      cliEnv(),
    );
    expect(filtered.json).toEqual({
      opt_outs: [
        {
          id: expect.any(Number),
          number: '+61412555022',
          erased: false,
          source: 'link',
          created_at: ISO,
        },
      ],
    });
    const none = await operator('opt-out list', { workspace: tenant.slug, number: '999' });
    expect(none.human).toBe(`${tenant.slug} has no opt-outs that match`);
    const empty = await createTenant(stack.admin);
    expect((await operator('opt-out list', { workspace: empty.slug })).human).toBe(
      `${empty.slug} has no opt-outs`,
    );
  });

  it('lists past the use-case’s page of 50: every opt-out, none twice', async () => {
    const tenant = await createTenant(stack.admin);
    const seededNumbers = Array.from(
      { length: 55 },
      (_, index) => `+614125551${String(index).padStart(2, '0')}`,
    );
    for (const number of seededNumbers) await optOut(stack.sql, tenant.workspaceId, number, 'link');
    const rows = await listed(tenant);
    expect(rows.map((row) => row.number)).toEqual(seededNumbers.toReversed());
  });

  it('refuses an unknown workspace, source or too short a number in one line, exit 2', async () => {
    const tenant = await seeded();
    await expect(operator('opt-out list', { workspace: 'no-such-ws' })).rejects.toThrow(
      new UsageError('No workspace has the slug "no-such-ws"'),
    );
    await expect(listed(tenant, { number: '55' })).rejects.toThrow(
      new UsageError('--number: type at least 3 digits of the number'),
    );
    const refused = await runHerald(
      ['opt-out', 'list', '--workspace', tenant.slug, '--source', 'stop'],
      cliEnv(),
    );
    expect(refused.code).toBe(2);
    expect(refused.stdout).toBe('');
    expect(refused.stderr).toBe(
      [
        'herald: --source must be one of link, reply, operator',
        'Usage:',
        '  herald opt-out list --workspace <slug> [--number <digits|+E.164>] [--source link|reply|operator]',
        '',
      ].join('\n'),
    );
  });
});

describe('herald opt-out remove', () => {
  it('undoes one number’s opt-out, gone from the list, audited by the operator', async () => {
    const tenant = await seeded();
    const [, , first] = await listed(tenant);
    const removed = await runHerald(
      ['opt-out', 'remove', '--workspace', tenant.slug, '--number', '+61412555011'],
      cliEnv(),
    );
    expect(removed.code, removed.stderr).toBe(0);
    expect(removed.stdout).toBe(
      `Removed the opt-out of +61412555011 from ${tenant.slug} (reply, opted out ${utc(first?.created_at)} UTC): it gets marketing messages again\n`,
    );
    expect((await listed(tenant)).map((row) => row.number)).toEqual([
      '+61412666033',
      '+61412555022',
    ]);
    expect(await removalLines(tenant.workspaceId)).toEqual([
      {
        action: 'opt_out.removed',
        target: 'opt-out •••• 5011',
        details: { source: 'reply', opted_out_at: first?.created_at },
      },
    ]);

    // Written as people write numbers, the + left out: the same number.
    const again = await operator('opt-out remove', {
      workspace: tenant.slug,
      number: '61 412 555 022',
    });
    expect(again.json).toEqual({
      workspace: tenant.slug,
      number: '+61412555022',
      removed: [{ id: expect.any(Number), erased: false, source: 'link', created_at: ISO }],
    });
    expect((await listed(tenant)).map((row) => row.number)).toEqual(['+61412666033']);
  });

  it('undoes an erased number’s opt-out by its full number, the audit line naming no number', async () => {
    const tenant = await seeded();
    await eraseRecipientNumber(
      stack.admin,
      { number: '+61412666033', workspace: tenant.slug },
      TEST_OPERATOR,
    );
    const erased = (await listed(tenant)).filter((row) => row.erased);
    expect(erased).toEqual([
      { id: expect.any(Number), number: null, erased: true, source: 'reply', created_at: ISO },
    ]);
    const removed = await operator('opt-out remove', {
      workspace: tenant.slug,
      number: '+61412666033',
    });
    expect(removed.json).toEqual({
      workspace: tenant.slug,
      number: '+61412666033',
      removed: [{ id: erased[0]?.id, erased: true, source: 'reply', created_at: ISO }],
    });
    expect((await listed(tenant)).map((row) => row.number)).toEqual([
      '+61412555022',
      '+61412555011',
    ]);
    expect(await removalLines(tenant.workspaceId)).toEqual([
      {
        action: 'opt_out.removed',
        target: 'opt-out of an erased number',
        details: { source: 'reply', opted_out_at: erased[0]?.created_at },
      },
    ]);
  });

  it('undoes both opt-outs of a number that opted out again after it was erased', async () => {
    const tenant = await seeded();
    await eraseRecipientNumber(
      stack.admin,
      { number: '+61412666033', workspace: tenant.slug },
      TEST_OPERATOR,
    );
    await optOut(stack.sql, tenant.workspaceId, '+61412666033', 'link');
    const found = await listed(tenant, { number: '+61412666033' });
    expect(found.map(({ number, erased, source }) => ({ number, erased, source }))).toEqual([
      { number: '+61412666033', erased: false, source: 'link' },
      { number: null, erased: true, source: 'reply' },
    ]);
    const removed = await operator('opt-out remove', {
      workspace: tenant.slug,
      number: '+61412666033',
    });
    expect((removed.json.removed as { id: number }[]).map((row) => row.id).sort()).toEqual(
      found.map((row) => row.id).sort(),
    );
    expect(await listed(tenant, { number: '+61412666033' })).toEqual([]);
    expect((await removalLines(tenant.workspaceId)).map((line) => line.target).sort()).toEqual([
      'opt-out of an erased number',
      'opt-out •••• 6033',
    ]);
  });

  it('refuses a number without an opt-out, a bad number or an unknown workspace, exit 2, nothing removed', async () => {
    const tenant = await seeded();
    const env = cliEnv();
    const unknown = await runHerald(
      ['opt-out', 'remove', '--workspace', tenant.slug, '--number', '+61412555099'],
      env,
    );
    expect(unknown.code).toBe(2);
    expect(unknown.stdout).toBe('');
    expect(unknown.stderr).toBe(
      [
        `herald: --number +61412555099 has not opted out of ${tenant.slug}`,
        'Usage:',
        '  herald opt-out remove --workspace <slug> --number <E.164>',
        '',
      ].join('\n'),
    );
    const asJson = await runHeraldJson(
      ['opt-out', 'remove', '--workspace', 'no-such-ws', '--number', '+61412555011'],
      env,
    );
    expect(asJson.code).toBe(2);
    expect(asJson.json).toEqual({
      error: { type: 'UsageError', message: 'No workspace has the slug "no-such-ws"' },
    });
    for (const [number, message] of [
      ['555011', '--number must be a whole number in international form, such as +61412555011'],
      ['+61412', '--number must be a whole number in international form, such as +61412555011'],
      ['', '--number is required'],
    ])
      await expect(operator('opt-out remove', { workspace: tenant.slug, number })).rejects.toThrow(
        new UsageError(message),
      );
    expect(await listed(tenant)).toHaveLength(3);
    expect(await removalLines(tenant.workspaceId)).toEqual([]);
  });
});
