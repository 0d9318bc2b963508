/**
 * OTP settings edited while an OTP service naming them is being saved: the service must never
 * end up naming a template that is gone, disabled or marketing, or a sender that is gone; every
 * OTP send with such a service would be refused. The race is forced: a transaction holding the
 * workspace's row stops the service's insert (its foreign-key check) after the service has read
 * its template and sender, and the edit runs while the insert waits.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import {
  createTemplate,
  deleteTemplate,
  updateTemplate,
} from '../../commands/messaging/templates.js';
import { createOtpService } from '../../commands/otp/services.js';
import { deleteSender, registerSender } from '../../commands/providers/senders.js';
import { createSql, type Sql } from '../../db/client.js';
import { TEST_OPERATOR } from '../support/actors.js';
import { createTenant, openStack, type Stack, type Tenant } from '../support/stack.js';

let stack: Stack;
/** The commands' own pool, so the test's holding transaction never starves them. */
let commandSql: Sql;
let deps: { sql: Sql };

beforeAll(async () => {
  stack = await openStack();
  commandSql = createSql(inject('databaseUrl'), { max: 10 });
  deps = { sql: commandSql };
});

afterAll(async () => {
  await commandSql.end();
  await stack.close();
});

const unique = (prefix: string) => `${prefix}-${randomBytes(4).toString('hex')}`;

/** Statements of the commands' pool waiting for a lock whose text matches `pattern`. */
async function waiting(pattern: string): Promise<number> {
  const [row] = await stack.sql<{ waiting: number }[]>`
    select count(*)::int as waiting from pg_stat_activity
    where wait_event_type = 'Lock' and query ilike ${pattern}`;
  return row?.waiting ?? 0;
}

async function untilWaiting(pattern: string) {
  const deadline = Date.now() + 2_000;
  while ((await waiting(pattern)) < 1) {
    if (Date.now() > deadline) throw new Error(`nothing waits on a lock for ${pattern}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/** Until `promise` settles, or a statement matching `pattern` waits on a lock (it is serialized). */
async function untilSettledOrWaiting(promise: Promise<unknown>, pattern: string) {
  let settled = false;
  promise.then(
    () => {
      settled = true;
    },
    () => {
      settled = true;
    },
  );
  const deadline = Date.now() + 2_000;
  while (!settled && (await waiting(pattern)) < 1) {
    if (Date.now() > deadline) throw new Error(`neither settled nor waiting on ${pattern}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/** The outcome of a command: what it returned, or its refusal's code and message. */
async function outcome(promise: Promise<unknown>) {
  return promise.then(
    () => 'done',
    (error: Error & { code?: string }) => ({ code: error.code, message: error.message }),
  );
}

/**
 * Runs `edit` while the creation of an OTP service with `settings` has read its template and
 * sender and waits to insert; returns both outcomes once both are done.
 */
async function editDuringServiceCreate(
  tenant: Tenant,
  settings: { template?: string; senderId?: string },
  edit: () => Promise<unknown>,
  editLockPattern: string,
) {
  let release = () => {};
  let locked = () => {};
  const holding = new Promise<void>((resolve) => {
    locked = resolve;
  });
  const held = stack.sql.begin(async (tx) => {
    await tx`select id from workspaces where id = ${tenant.workspaceId} for update`;
    await new Promise<void>((resolve) => {
      release = resolve;
      locked();
    });
  });
  await Promise.race([holding, held]);
  const created = outcome(
    createOtpService(
      deps,
      {
        workspace: tenant.slug,
        name: 'Sign-in',
        purpose: 'login',
        ...settings,
      },
      TEST_OPERATOR,
    ),
  );
  try {
    await untilWaiting('%insert into otp_services%');
    const edited = outcome(edit());
    await untilSettledOrWaiting(edited, editLockPattern);
    release();
    await held;
    return { created: await created, edited: await edited };
  } finally {
    release();
  }
}

/** The tenant's OTP services with what a send would find of their template and sender. */
function servicesOf(tenant: Tenant) {
  return stack.sql<
    {
      name: string;
      templateSlug: string | null;
      templateEnabled: boolean | null;
      templatePurpose: string | null;
      senderId: string | null;
      senderApproved: boolean | null;
    }[]
  >`
    select s.name, s.template_slug, t.enabled as template_enabled,
      t.purpose as template_purpose, s.sender_id, d.approved as sender_approved
    from otp_services s
    left join message_templates t
      on t.workspace_id = s.workspace_id and t.slug = s.template_slug
    left join sender_ids d
      on d.workspace_id = s.workspace_id and d.sender = s.sender_id
        and d.provider_slug = coalesce(s.provider_slug, 'own')
    where s.workspace_id = ${tenant.workspaceId}
    order by s.id`;
}

async function tenantWithTemplate() {
  const tenant = await createTenant(stack.admin);
  await createTemplate(
    deps,
    {
      workspace: tenant.slug,
      slug: 'login-code',
      body: 'Your code is {code}',
    },
    TEST_OPERATOR,
  );
  return tenant;
}

describe('a template edited while an OTP service naming it is created', () => {
  it('is not deleted from under the service: the delete is refused once the service exists', async () => {
    const tenant = await tenantWithTemplate();
    const { created, edited } = await editDuringServiceCreate(
      tenant,
      { template: 'login-code' },
      () => deleteTemplate(deps, { workspace: tenant.slug, slug: 'login-code' }, TEST_OPERATOR),
      '%message_templates%for update%',
    );

    // Never a service naming a template that is gone.
    expect(await servicesOf(tenant)).toEqual([
      expect.objectContaining({
        name: 'Sign-in',
        templateSlug: 'login-code',
        templateEnabled: true,
        templatePurpose: 'transactional',
      }),
    ]);
    expect({ created, edited }).toEqual({
      created: 'done',
      edited: {
        code: 'conflict',
        message: 'The OTP service "Sign-in" sends with the template "login-code"; change it first',
      },
    });
  });

  it.each([
    [
      'disabled',
      { enabled: false },
      'enabled: the OTP service "Sign-in" sends with this template; change it first',
    ],
    [
      'made marketing',
      { purpose: 'marketing' },
      'purpose: the OTP service "Sign-in" sends with this template, which must stay transactional',
    ],
  ])(
    'is not %s under the service: the edit is refused once the service exists',
    async (_, change, refusal) => {
      const tenant = await tenantWithTemplate();
      const { created, edited } = await editDuringServiceCreate(
        tenant,
        { template: 'login-code' },
        () =>
          updateTemplate(
            deps,
            { workspace: tenant.slug, slug: 'login-code', ...change },
            TEST_OPERATOR,
          ),
        '%message_templates%for update%',
      );

      // Never a service on a template every OTP send refuses.
      expect(await servicesOf(tenant)).toEqual([
        expect.objectContaining({
          name: 'Sign-in',
          templateSlug: 'login-code',
          templateEnabled: true,
          templatePurpose: 'transactional',
        }),
      ]);
      expect({ created, edited }).toEqual({
        created: 'done',
        edited: { code: 'conflict', message: refusal },
      });
    },
  );
});

describe('a sender deleted while an OTP service sending from it is created', () => {
  it('is not deleted from under the service: the delete is refused once the service exists', async () => {
    const tenant = await createTenant(stack.admin);
    const sender = unique('Acme').slice(0, 11);
    const { id } = await registerSender(
      deps,
      {
        workspace: tenant.slug,
        provider: 'own',
        sender,
      },
      TEST_OPERATOR,
    );
    const { created, edited } = await editDuringServiceCreate(
      tenant,
      { senderId: sender },
      () => deleteSender(deps, { workspace: tenant.slug, id }, TEST_OPERATOR),
      '%sender_ids%for update%',
    );

    // Never a service sending from a sender that is gone.
    expect(await servicesOf(tenant)).toEqual([
      expect.objectContaining({ name: 'Sign-in', senderId: sender, senderApproved: true }),
    ]);
    expect({ created, edited }).toEqual({
      created: 'done',
      edited: {
        code: 'conflict',
        message: `The OTP service "Sign-in" sends from "${sender}" through own; change it first`,
      },
    });
  });
});

describe('a refusal naming the OTP services that use a template', () => {
  it('names the first three of 30 and counts the rest', async () => {
    const tenant = await tenantWithTemplate();
    for (let number = 1; number <= 30; number++) {
      await createOtpService(
        deps,
        {
          workspace: tenant.slug,
          name: `Service ${String(number).padStart(2, '0')}`,
          purpose: 'login',
          template: 'login-code',
        },
        TEST_OPERATOR,
      );
    }

    expect(
      await outcome(
        deleteTemplate(deps, { workspace: tenant.slug, slug: 'login-code' }, TEST_OPERATOR),
      ),
    ).toEqual({
      code: 'conflict',
      message:
        'The OTP services "Service 01", "Service 02", "Service 03" and 27 more send with the template "login-code"; change them first',
    });
    expect(
      await outcome(
        updateTemplate(
          deps,
          { workspace: tenant.slug, slug: 'login-code', enabled: false },
          TEST_OPERATOR,
        ),
      ),
    ).toEqual({
      code: 'conflict',
      message:
        'enabled: the OTP services "Service 01", "Service 02", "Service 03" and 27 more send with this template; change them first',
    });
  });
});
