/** Console sessions: a signed-in browser, in Postgres, revocable, with idle and absolute timeouts. */
import { createHash, randomBytes } from 'node:crypto';
import type { TransactionSql } from '../../db/client.js';
import {
  type ConsoleVisitor,
  findConsoleVisitor,
  insertConsoleSession,
  listUserConsoleSessions,
  type PausedRanges,
  revokeConsoleSession,
  revokeOwnConsoleSession,
  revokeUserConsoleSessions,
  setSessionWorkspace,
  touchConsoleSession,
  type UserConsoleSession,
} from '../../db/console-sessions.js';
import { findSignInWorkspaces, type WorkspaceChoice } from '../../db/member-access.js';
import type { Actor } from '../actor.js';
import { writeAudit } from '../audit.js';
import type { CommandDeps } from '../deps.js';
import { notFound } from '../input.js';
import { type SignInResult, signInWithPassword } from '../team/sign-in.js';

type Deps = Pick<CommandDeps, 'sql'>;

export const CONSOLE_SESSION_TIMEOUTS = {
  /** Signed out after this long without a request. */
  idleSeconds: 2 * 60 * 60,
  /** Signed out this long after signing in, however active. */
  absoluteSeconds: 12 * 60 * 60,
} as const;

const TOKEN = /^hcs_[A-Za-z0-9_-]{43}$/;

/**
 * The token is 256 random bits, so a plain SHA-256 of it is as good as a keyed hash: a leaked
 * table gives no token back, and nothing about HERALD_SECRET is needed to find a session.
 */
function tokenHash(token: string): Buffer {
  return createHash('sha256').update(token).digest();
}

export interface StartedSession {
  /** The cookie's value: given once, stored only as a hash. */
  token: string;
  sessionId: number;
}

export type ConsoleSignIn =
  | Exclude<SignInResult, { outcome: 'signed-in' }>
  | { outcome: 'no-workspace' }
  | ({ outcome: 'signed-in'; workspace: WorkspaceChoice } & StartedSession);

/**
 * The console's password sign-in: the one implementation (and throttle) the OAuth sign-in uses,
 * then a session in the workspace asked for (by slug) if the user is an active member there, else
 * their first. With a second factor enrolled, the session waits for the code, and the sign-in is
 * audited when the code is right (commands/team/totp.ts); otherwise with the session. A failed
 * sign-in changes nothing and records no line (the throttle counts it).
 */
export async function signInToConsole(
  deps: Pick<CommandDeps, 'sql' | 'secret'>,
  input: {
    email: string;
    password: string;
    address: string;
    userAgent: string | null;
    workspace?: string;
    secondFactorEnrolled: (userId: number) => Promise<boolean>;
  },
): Promise<ConsoleSignIn> {
  const result = await signInWithPassword(deps, input);
  if (result.outcome !== 'signed-in') return result;
  const workspaces = await findSignInWorkspaces(deps.sql, result.user.id);
  const workspace = workspaces.find((choice) => choice.slug === input.workspace) ?? workspaces[0];
  if (!workspace) return { outcome: 'no-workspace' };
  const secondFactorPending = await input.secondFactorEnrolled(result.user.id);
  const signedIn: Actor = {
    kind: 'member',
    userId: result.user.id,
    email: result.user.email,
    address: input.address,
    userAgent: input.userAgent,
  };
  const session = await startConsoleSession(
    deps,
    {
      userId: result.user.id,
      workspaceId: workspace.id,
      secondFactorPending,
      address: input.address,
      userAgent: input.userAgent,
    },
    async (tx) => {
      if (!secondFactorPending)
        await writeAudit(tx, signedIn, workspace.id, {
          action: 'session.signed_in',
          target: null,
          details: {},
        });
    },
  );
  return { outcome: 'signed-in', workspace, ...session };
}

export async function startConsoleSession(
  deps: Deps,
  input: {
    userId: number;
    workspaceId: number;
    secondFactorPending: boolean;
    address: string | null;
    userAgent: string | null;
  },
  /** Runs in the transaction that stores the session (its audit line). */
  alongside: (tx: TransactionSql) => Promise<void> = async () => {},
): Promise<StartedSession> {
  const token = `hcs_${randomBytes(32).toString('base64url')}`;
  const id = await deps.sql.begin(async (tx) => {
    const { id } = await insertConsoleSession(tx, {
      ...input,
      tokenHash: tokenHash(token),
      userAgent: input.userAgent?.slice(0, 500) ?? null,
      lifetimeSeconds: CONSOLE_SESSION_TIMEOUTS.absoluteSeconds,
    });
    await alongside(tx);
    return id;
  });
  return { token, sessionId: id };
}

/** The visitor behind a cookie's token, or undefined: unknown, revoked, idle or expired. */
export async function findConsoleSession(
  deps: Deps,
  token: string | undefined,
): Promise<ConsoleVisitor | undefined> {
  if (!token || !TOKEN.test(token)) return undefined;
  const visitor = await findConsoleVisitor(
    deps.sql,
    tokenHash(token),
    CONSOLE_SESSION_TIMEOUTS.idleSeconds,
  );
  if (visitor && Date.now() - visitor.lastSeenAt.getTime() > 60_000) {
    await touchConsoleSession(deps.sql, visitor.sessionId);
  }
  return visitor;
}

/** Signs this browser out. */
export async function endConsoleSession(
  deps: Deps,
  session: { sessionId: number; workspaceId: number },
  actor: Actor,
): Promise<void> {
  await deps.sql.begin(async (tx) => {
    await revokeConsoleSession(tx, session.sessionId);
    await writeAudit(tx, actor, session.workspaceId, {
      action: 'session.signed_out',
      target: null,
      details: {},
    });
  });
}

/** The workspaces the user can switch to: their active memberships. */
export async function listSwitchableWorkspaces(
  deps: Deps,
  userId: number,
): Promise<WorkspaceChoice[]> {
  return findSignInWorkspaces(deps.sql, userId);
}

/**
 * Moves the session to another workspace the user is an active member of (`from`: the slug of
 * the one it leaves); the line is the chosen workspace's.
 */
export async function switchConsoleWorkspace(
  deps: Deps,
  input: { sessionId: number; userId: number; workspace: string; from: string },
  actor: Actor,
): Promise<WorkspaceChoice> {
  const workspaces = await findSignInWorkspaces(deps.sql, input.userId);
  const chosen = workspaces.find((choice) => choice.slug === input.workspace);
  if (!chosen) throw notFound`You are not an active member of a workspace "${input.workspace}"`;
  await deps.sql.begin(async (tx) => {
    await setSessionWorkspace(tx, input.sessionId, chosen.id);
    await writeAudit(tx, actor, chosen.id, {
      action: 'session.switched_workspace',
      target: `workspace ${chosen.slug}`,
      details: { from: input.from },
    });
  });
  return chosen;
}

export type { ConsoleVisitor, PausedRanges, UserConsoleSession, WorkspaceChoice };

/** The user signs out every browser of theirs but this one; how many were signed out. */
export async function endOtherConsoleSessions(
  deps: Deps,
  input: { userId: number; keepSessionId: number; workspaceId: number },
  actor: Actor,
): Promise<number> {
  return deps.sql.begin(async (tx) => {
    const ended = await revokeUserConsoleSessions(tx, input.userId, input.keepSessionId);
    await writeAudit(tx, actor, input.workspaceId, {
      action: 'session.signed_out_elsewhere',
      target: null,
      details: { sessions_ended: ended },
    });
    return ended;
  });
}

/** The user's signed-in browsers, for their profile. */
export async function listMyConsoleSessions(
  deps: Deps,
  userId: number,
): Promise<UserConsoleSession[]> {
  return listUserConsoleSessions(deps.sql, userId, CONSOLE_SESSION_TIMEOUTS.idleSeconds);
}

/**
 * Signs one of the user's own browsers out: its next request is refused. Another user's session,
 * or one already ended, is not found (the answer does not tell which).
 */
export async function endMyConsoleSession(
  deps: Deps,
  input: { userId: number; sessionId: number; workspaceId: number },
  actor: Actor,
): Promise<void> {
  const ended =
    Number.isSafeInteger(input.sessionId) &&
    (await deps.sql.begin(async (tx) => {
      const revoked = await revokeOwnConsoleSession(
        tx,
        input.userId,
        input.sessionId,
        CONSOLE_SESSION_TIMEOUTS.idleSeconds,
      );
      if (revoked)
        await writeAudit(tx, actor, input.workspaceId, {
          action: 'session.revoked',
          target: `session #${input.sessionId}`,
          details: {},
        });
      return revoked;
    }));
  if (!ended) throw notFound`This is not one of your signed-in sessions, or it has already ended`;
}
