/**
 * The OTP and fraud-guard use-cases write their own audit line, in the change's transaction
 * (issue 31): each change, asked by an operator (`herald`: source cli, `cli@<host>`) or by a
 * console member (source console, their address and browser), leaves exactly one line with the
 * action, target and details the Audit page has always shown; a refused change leaves none.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { Actor } from '../../commands/actor.js';
import { setGuard, unblockRange } from '../../commands/fraud-guard/settings.js';
import { eraseRecipientNumber } from '../../commands/messaging/recipient-erasure.js';
import {
  createTemplate,
  deleteTemplate,
  updateTemplate,
} from '../../commands/messaging/templates.js';
import { addCredits } from '../../commands/otp/credits.js';
import {
  createOtpService,
  deleteOtpService,
  updateOtpService,
} from '../../commands/otp/services.js';
import { deleteSender, registerSender, requestSender } from '../../commands/providers/senders.js';
import { createSql, type Sql } from '../../db/client.js';
import { insertWorkspace } from '../../db/workspaces.js';
import { TEST_OPERATOR } from '../support/actors.js';

let sql: Sql;
let deps: { sql: Sql; secret: string };

beforeAll(() => {
  sql = createSql(inject('databaseUrl'), { max: 4 });
  deps = { sql, secret: inject('secret') };
});
afterAll(() => sql.end());

async function workspace() {
  const slug = `u-${randomBytes(5).toString('hex')}`;
  const { id } = await insertWorkspace(sql, { slug, name: `Audited ${slug}` });
  return { id, slug };
}

const OPERATOR: Actor = { kind: 'operator', user: 'ops', host: 'box.test' };

/** A console member (a user row of their own), from a documentation address. */
async function member(): Promise<Actor> {
  const email = `ann-${randomBytes(4).toString('hex')}@acme.test`;
  const [user] = await sql<{ id: number }[]>`
    insert into users (email, password_hash) values (${email}, 'not a hash') returning id`;
  return {
    kind: 'member',
    userId: Number(user?.id),
    email,
    address: '203.0.113.7',
    userAgent: 'Vitest/3',
  };
}

/** Who the log names for each actor: the columns every line of theirs has. */
function recordedAs(actor: Actor) {
  if (actor.kind === 'member')
    return {
      source: 'console',
      actor: actor.email,
      userId: actor.userId,
      address: actor.address,
      userAgent: actor.userAgent,
      origin: null,
    };
  if (actor.kind === 'operator')
    return {
      source: 'cli',
      actor: actor.user,
      userId: null,
      address: null,
      userAgent: null,
      origin: `cli@${actor.host}`,
    };
  throw new Error('an API key changes none of these');
}

/** Runs `change` and returns the lines it wrote in the workspace, oldest first. */
async function linesOf(workspaceId: number, change: () => Promise<unknown>) {
  const [last] = await sql<{ id: number | null }[]>`select max(id) as id from audit_log`;
  await change();
  return sql`
    select source, actor, user_id, host(address) as address, user_agent, origin, action,
      target, details
    from audit_log where workspace_id = ${workspaceId} and id > ${last?.id ?? 0} order by id`;
}

/** A range the breaker blocked, as recordRangeBlock leaves it (its own line is the guard's). */
async function blockedRange(workspaceId: number) {
  const range = `+6141${String(Math.floor(Math.random() * 1e5)).padStart(5, '0')}`;
  await sql`
    insert into guard_blocked_ranges (workspace_id, range, blocked_until, sends, verified)
    values (${workspaceId}, ${range}, now() + interval '1 hour', 3, 0)`;
  return range;
}

describe.each([
  ['an operator', () => Promise.resolve(OPERATOR)],
  ['a console member', member],
])('a change asked by %s', (_who, actorOf) => {
  it('writes exactly one line naming them, as the Audit page has always shown it', async () => {
    const actor = await actorOf();
    const by = recordedAs(actor);
    const { id, slug } = await workspace();
    const one = async (change: () => Promise<unknown>) => {
      const lines = await linesOf(id, change);
      expect(lines).toHaveLength(1);
      const [line] = lines;
      expect(line).toMatchObject(by);
      return { action: line?.action, target: line?.target, details: line?.details };
    };
    const w = { workspace: slug };

    expect(await one(() => addCredits(deps, { ...w, amount: 25 }, actor))).toEqual({
      action: 'credits.added',
      target: `workspace ${slug}`,
      details: { amount: 25, balance: 25 },
    });

    const template = { ...w, slug: 'code', body: 'Your code is {code}' };
    expect(await one(() => createTemplate(deps, template, actor))).toEqual({
      action: 'template.created',
      target: 'Template code',
      details: { purpose: 'transactional' },
    });
    expect(
      await one(() => updateTemplate(deps, { ...w, slug: 'code', name: 'Code' }, actor)),
    ).toEqual({
      action: 'template.updated',
      target: 'Template code',
      details: { purpose: 'transactional', enabled: true },
    });

    // The operator registers a sender (`herald sender create --pending`); a member asks for one.
    let senderId = 0;
    const sender = { ...w, provider: 'own', sender: ' Acme ' };
    expect(
      await one(async () => {
        const registered =
          actor.kind === 'operator'
            ? await registerSender(deps, { ...sender, approved: false }, actor)
            : await requestSender(deps, sender, actor);
        senderId = registered.id;
      }),
    ).toEqual({
      action: 'sender.registered',
      target: 'Sender Acme (own)',
      details: { approved: false },
    });

    let service = '';
    expect(
      await one(async () => {
        const created = await createOtpService(
          deps,
          { ...w, name: 'Sign-in', purpose: 'login' },
          actor,
        );
        service = created.service.slug;
      }),
    ).toEqual({
      action: 'otp_service.created',
      target: 'OTP service Sign-in',
      details: { slug: service },
    });
    expect(
      await one(() => updateOtpService(deps, { ...w, slug: service, name: 'Log-in' }, actor)),
    ).toEqual({
      action: 'otp_service.updated',
      target: 'OTP service Log-in',
      details: { slug: service },
    });

    // The settings as asked (trimmed), by option name; `inherit` clears one.
    expect(
      await one(() => setGuard(deps, { ...w, otpPerRecipient: ' 3/15m ', keyRate: '50/s' }, actor)),
    ).toEqual({
      action: 'guard.updated',
      target: `workspace ${slug}`,
      details: { otp_per_recipient: '3/15m', key_rate: '50/s' },
    });
    expect(
      await one(() =>
        setGuard(deps, { ...w, otpService: service.toUpperCase(), rangeBreaker: 'inherit' }, actor),
      ),
    ).toEqual({
      action: 'guard.updated',
      target: `OTP service ${service}`,
      details: { range_breaker: 'inherit' },
    });
    const range = await blockedRange(id);
    expect(await one(() => unblockRange(deps, { ...w, range }, actor))).toEqual({
      action: 'guard.range_unblocked',
      target: `range ${range}`,
      details: { range },
    });
    const [lifted] = await sql`select lifted_by from guard_blocked_ranges where range = ${range}`;
    expect(lifted?.liftedBy).toBe(actor.kind === 'member' ? actor.email : 'ops');

    expect(await one(() => deleteOtpService(deps, { ...w, slug: service }, actor))).toEqual({
      action: 'otp_service.deleted',
      target: `OTP service ${service}`,
      details: {},
    });
    expect(await one(() => deleteTemplate(deps, { ...w, slug: 'code' }, actor))).toEqual({
      action: 'template.deleted',
      target: 'Template code',
      details: {},
    });
    expect(await one(() => deleteSender(deps, { ...w, id: senderId }, actor))).toEqual({
      action: 'sender.deleted',
      target: 'Sender Acme (own)',
      details: {},
    });

    // The number only masked; the rows by kind, those with none left out.
    await sql`insert into opt_outs (workspace_id, recipient) values (${id}, '+61412345678')`;
    expect(
      await one(() => eraseRecipientNumber(deps, { ...w, number: '+61412345678' }, actor)),
    ).toEqual({
      action: 'recipient.erased',
      target: 'recipient •••• 5678',
      details: { opt_outs_hashed: 1 },
    });
  });
});

describe('a refused change', () => {
  it('writes no line, nor does an erasure that changed nothing', async () => {
    const { id, slug } = await workspace();
    const w = { workspace: slug };
    // What the refusals meet: a template a service sends with, a sender asked for.
    await createTemplate(deps, { ...w, slug: 'code', body: 'Your code is {code}' }, TEST_OPERATOR);
    const { service } = await createOtpService(
      deps,
      {
        ...w,
        name: 'Sign-in',
        purpose: 'login',
        template: 'code',
      },
      TEST_OPERATOR,
    );
    await requestSender(deps, { ...w, provider: 'own', sender: 'Acme' }, TEST_OPERATOR);
    const none = async (change: () => Promise<unknown>, refusal: string) => {
      expect(await linesOf(id, () => expect(change()).rejects.toThrow(refusal))).toEqual([]);
    };

    await none(
      () => addCredits(deps, { ...w, amount: 0 }, OPERATOR),
      'amount must be a positive integer',
    );
    // Refused inside the transaction, by the database or a lock-held check.
    await none(
      () => createTemplate(deps, { ...w, slug: 'code', body: 'Again {code}' }, OPERATOR),
      `slug: ${slug} already has a template "code"`,
    );
    await none(
      () => deleteTemplate(deps, { ...w, slug: 'code' }, OPERATOR),
      'The OTP service "Sign-in" sends with the template "code"; change it first',
    );
    await none(
      () => requestSender(deps, { ...w, provider: 'own', sender: 'Acme' }, OPERATOR),
      `sender: "Acme" is already registered for own in ${slug}`,
    );
    await none(
      () => updateOtpService(deps, { ...w, slug: service.slug, codeLength: 12 }, OPERATOR),
      'codeLength must be an integer from 6 to 8',
    );
    await none(
      () => setGuard(deps, { ...w, keyRate: 'lots' }, OPERATOR),
      'keyRate "lots" must be requests per second or minute, like 100/s or 6000/m, or off, or inherit',
    );
    await none(
      () => unblockRange(deps, { ...w, range: '+6141999' }, OPERATOR),
      `range "+6141999" is not blocked in ${slug}`,
    );
    await none(
      () => eraseRecipientNumber(deps, { ...w, number: '0412 345 678' }, OPERATOR),
      'number must be a phone number in E.164 form, like +61412345678',
    );
    const erased = await linesOf(id, () =>
      eraseRecipientNumber(deps, { ...w, number: '+61499999999' }, OPERATOR),
    );
    expect(erased).toEqual([]);
  });
});
