import type { Permission, Role } from '../domain/access.js';
import type { Sql, TransactionSql } from './client.js';

export interface User {
  id: number;
  email: string;
  passwordHash: string;
}

export async function findUserByEmail(sql: Sql, email: string): Promise<User | undefined> {
  const [user] = await sql<User[]>`
    select id, email, password_hash from users where lower(email) = lower(${email})`;
  return user;
}

/** Creates the user, or reuses it when the email exists, and makes it a member of the workspace. */
export async function upsertMember(
  sql: Sql,
  input: {
    workspaceId: number;
    email: string;
    passwordHash: string;
    role: Role;
    permissions: readonly Permission[];
  },
  /** Runs in the same transaction once the membership is new (its audit line). */
  alongside?: (tx: TransactionSql, userId: number) => Promise<void>,
): Promise<{ userId: number; created: boolean }> {
  return sql.begin(async (tx) => {
    const [existing] = await tx<{ id: number }[]>`
      select id from users where lower(email) = lower(${input.email}) for update`;
    const userId =
      existing?.id ??
      (
        await tx<{ id: number }[]>`
          insert into users (email, password_hash) values (${input.email}, ${input.passwordHash})
          returning id`
      )[0]?.id;
    if (userId === undefined) throw new Error('user insert returned no row');
    const [membership] = await tx<{ userId: number }[]>`
      insert into workspace_members (workspace_id, user_id, role, permissions)
      values (${input.workspaceId}, ${userId}, ${input.role}, ${input.permissions as string[]})
      on conflict (workspace_id, user_id) do nothing
      returning user_id`;
    if (membership) await alongside?.(tx, userId);
    return { userId, created: membership !== undefined };
  });
}

export async function findMemberUserId(
  sql: Sql,
  workspaceId: number,
  email: string,
): Promise<number | undefined> {
  const [row] = await sql<{ id: number }[]>`
    select u.id from users u
    join workspace_members m on m.user_id = u.id and m.workspace_id = ${workspaceId}
    where lower(u.email) = lower(${email})`;
  return row?.id;
}

/** The member's current permissions in the workspace; empty when not a member. */
export async function findMemberPermissions(
  sql: Sql,
  workspaceId: number,
  userId: number,
): Promise<Permission[]> {
  const [row] = await sql<{ permissions: Permission[] }[]>`
    select permissions from workspace_members
    where workspace_id = ${workspaceId} and user_id = ${userId}`;
  return row?.permissions ?? [];
}
