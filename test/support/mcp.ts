import { randomBytes } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { inject } from 'vitest';
import { userCreate } from '../../cli/admin/users.js';
import { workspaceCreate } from '../../cli/admin/workspaces.js';
import type { AdminContext } from '../../cli/context.js';
import { parseEnv } from '../../config/env.js';
import { createSql, type Sql } from '../../db/client.js';
import type { Permission, Role } from '../../domain/access.js';
import { buildApp } from '../../server/app.js';
import { connectTemporalClient } from '../../temporal/client.js';
import { TEST_OPERATOR } from './actors.js';
import { freePorts } from './processes.js';

export { authorizeInForms } from './oauth-forms.js';

export interface McpServerUnderTest {
  baseUrl: string;
  /** `{baseUrl}/mcp` */
  resource: string;
  app: FastifyInstance;
  sql: Sql;
  admin: AdminContext;
  close(): Promise<void>;
}

/** The api listening on a real port with MCP enabled, so HTTP clients can drive OAuth. */
export async function openMcpServer(
  settings: Record<string, string> = {},
): Promise<McpServerUnderTest> {
  const [port] = (await freePorts(1)) as [number];
  const baseUrl = `http://127.0.0.1:${port}`;
  const env = parseEnv({
    LOG_LEVEL: 'silent',
    PUBLIC_URL: baseUrl,
    MCP_ENABLED: 'true',
    ...settings,
  });
  const secret = inject('secret');
  const sql = createSql(inject('databaseUrl'), { max: 4 });
  const temporal = await connectTemporalClient(inject('temporalAddress'), 'default');
  const app = buildApp({ env, publicUrl: baseUrl, secret, sql, temporal }, { logger: false });
  await app.listen({ host: '127.0.0.1', port });
  return {
    baseUrl,
    resource: `${baseUrl}/mcp`,
    app,
    sql,
    admin: { env, secret, sql, actor: TEST_OPERATOR },
    async close() {
      await app.close();
      await temporal.connection.close();
      await sql.end();
    },
  };
}

export interface McpUser {
  email: string;
  password: string;
  userId: number;
  workspaceId: number;
  workspaceSlug: string;
  workspaceName: string;
}

/** A fresh workspace and a member of it (owner by default: every permission). */
export async function createMcpUser(
  admin: AdminContext,
  options: { role?: Role; email?: string; password?: string } = {},
): Promise<McpUser> {
  const slug = `m-${randomBytes(6).toString('hex')}`;
  const workspaceName = `Workspace ${slug}`;
  const workspace = (await workspaceCreate(admin, { name: workspaceName, slug })).json as {
    id: number;
  };
  const email = options.email ?? `owner@${slug}.test`;
  const password = options.password ?? 'correct horse battery';
  const user = (
    await userCreate(admin, {
      workspace: slug,
      email,
      password,
      role: options.role ?? 'owner',
    })
  ).json as { id: number };
  return {
    email,
    password,
    userId: user.id,
    workspaceId: workspace.id,
    workspaceSlug: slug,
    workspaceName,
  };
}

export async function setPermissions(sql: Sql, user: McpUser, permissions: Permission[]) {
  await sql`
    update workspace_members set permissions = ${permissions}
    where workspace_id = ${user.workspaceId} and user_id = ${user.userId}`;
}
