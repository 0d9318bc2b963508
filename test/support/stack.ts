import { randomBytes } from 'node:crypto';
import type { Client } from '@temporalio/client';
import { msToTs } from '@temporalio/common/lib/time.js';
import type { FastifyInstance } from 'fastify';
import { inject } from 'vitest';
import type { AdminConnection, AdminContext } from '../../cli/context.js';
import { createOtpService } from '../../commands/otp/services.js';
import { createApiKey } from '../../commands/team/api-keys.js';
import { addUser } from '../../commands/team/users.js';
import { createWorkspace } from '../../commands/team/workspaces.js';
import { parseEnv } from '../../config/env.js';
import { createSql, type Sql } from '../../db/client.js';
import type { Ability } from '../../domain/access.js';
import { buildApp } from '../../server/app.js';
import { connectTemporalClient } from '../../temporal/client.js';
import { ensureSearchAttributes } from '../../temporal/search-attributes.js';
import { TEST_OPERATOR } from './actors.js';

export interface Stack {
  sql: Sql;
  app: FastifyInstance;
  temporal: Client;
  /** A test's calls of admin commands: audited by TEST_OPERATOR (herald's: runAsOperator). */
  admin: AdminContext;
  close(): Promise<void>;
}

export const PUBLIC_URL = 'http://herald.test';

/**
 * The api wired to the run's real Postgres and Temporal, exercised with `app.inject`; its
 * campaigns run on the shared worker unless `namespace` names one where a test runs its own.
 */
export async function openStack(namespace = 'default'): Promise<Stack> {
  const env = parseEnv({ LOG_LEVEL: 'silent', PUBLIC_URL });
  const secret = inject('secret');
  const sql = createSql(inject('databaseUrl'), { max: 4 });
  const temporal = await connectTemporalClient(inject('temporalAddress'), namespace);
  const app = buildApp({ env, publicUrl: PUBLIC_URL, secret, sql, temporal }, { logger: false });
  await app.ready();
  return {
    sql,
    app,
    temporal,
    admin: { env, secret, sql, actor: TEST_OPERATOR },
    async close() {
      await app.close();
      await temporal.connection.close();
      await sql.end();
    },
  };
}

export interface Tenant {
  workspaceId: number;
  slug: string;
  userId: number;
  /** A token with every ability. */
  token: string;
  keyWith(abilities: Ability[]): Promise<{ id: number; token: string }>;
}

/** A fresh workspace with one developer and an all-abilities key: tests never share tenants. */
export async function createTenant(admin: AdminConnection): Promise<Tenant> {
  const slug = `t-${randomBytes(6).toString('hex')}`;
  // Set up by the test, not by the operator whose commands a test may audit.
  const workspace = await createWorkspace(admin, { name: `Tenant ${slug}`, slug }, TEST_OPERATOR);
  const email = `dev@${slug}.test`;
  const { userId } = await addUser(
    admin,
    { workspace: slug, email, password: 'correct horse 1' },
    TEST_OPERATOR,
  );
  const keyWith = async (abilities: Ability[]) => {
    const { id, token } = await createApiKey(
      admin,
      { workspace: slug, user: email, abilities },
      TEST_OPERATOR,
    );
    return { id, token };
  };
  const { token } = await keyWith(['messages:send', 'messages:read', 'otp:send', 'otp:verify']);
  return { workspaceId: workspace.id, slug, userId, token, keyWith };
}

/** A login OTP service "Sign-in" in `workspace`, set up by the test. */
export async function signInOtpService(admin: AdminContext, workspace: string) {
  const { service } = await createOtpService(
    admin,
    { workspace, name: 'Sign-in', purpose: 'login' },
    TEST_OPERATOR,
  );
  return service;
}

/**
 * Registers a Temporal namespace of a test's own, so no worker but the test's ever runs its
 * work, and waits until the frontend serves it (it learns of new namespaces on a cache refresh).
 */
export async function registerTestNamespace(namespace: string): Promise<void> {
  const client = await connectTemporalClient(inject('temporalAddress'), 'default');
  try {
    await client.workflowService.registerNamespace({
      namespace,
      workflowExecutionRetentionPeriod: msToTs('1 day'),
    });
    const scoped = await connectTemporalClient(inject('temporalAddress'), namespace);
    try {
      for (
        let tries = 0;
        !(await scoped.workflow.count().then(
          () => true,
          () => false,
        ));
        tries++
      ) {
        if (tries > 60) throw new Error(`namespace ${namespace} never became usable`);
        await new Promise((resolve) => setTimeout(resolve, 500));
      }
      await ensureSearchAttributes(scoped, namespace);
    } finally {
      await scoped.connection.close();
    }
  } finally {
    await client.connection.close();
  }
}
