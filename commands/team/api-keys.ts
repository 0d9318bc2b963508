/** API keys: issued with abilities and optional routing (the token shown once), revoked by id. */
import {
  type ApiKeyListing,
  insertApiKey,
  type KeyRate,
  listApiKeys,
  revokeApiKey as revokeApiKeyRow,
  updateApiKeyRate,
} from '../../db/api-keys.js';
import { findMemberUserId } from '../../db/users.js';
import { ABILITIES, type Ability, isAbility } from '../../domain/access.js';
import { formatRequestRate, parseRequestRate } from '../../domain/fraud-guard.js';
import { issueApiKeyToken, keyedHash } from '../../security/tokens.js';
import type { Actor } from '../actor.js';
import { writeAudit } from '../audit.js';
import type { CommandDeps } from '../deps.js';
import {
  conflict,
  type FieldRef,
  fieldsOf,
  invalid,
  notFound,
  optionalText,
  refuseAll,
} from '../input.js';
import { checkFailoverRoute } from '../providers/failover-routes.js';
import { checkProvider } from '../providers/providers.js';
import { findWorkspace } from './workspaces.js';

export type { ApiKeyListing };

export interface CreateApiKeyInput {
  workspace?: string;
  abilities?: string[];
  /** Sends with the key go through this provider (`own` included)... */
  provider?: string;
  /** ...or this failover route; neither: the request's choice, else `own`. */
  failoverRoute?: string;
  /** A member's email: the key acts for them. */
  user?: string;
  name?: string;
  /** The key's own request rate (`100/s`, `6000/m`, `off`); absent or `default`: its workspace's. */
  rate?: string;
}

export interface CreatedApiKey {
  id: number;
  /** The secret: shown once, stored only as a keyed hash. */
  token: string;
  prefix: string;
  abilities: Ability[];
  /** Its own rate; null: it follows its workspace's key rate. */
  rate: KeyRate;
}

/** Follows the workspace's key rate (`herald guard set --key-rate`). */
export const DEFAULT_KEY_RATE = 'default';

/** A key rate in its text form; undefined when not given, null for `default`. */
function parseKeyRate(text: string | undefined, ref: FieldRef): KeyRate | undefined {
  const given = optionalText(text);
  if (given === undefined) return undefined;
  if (given === DEFAULT_KEY_RATE) return null;
  const rate = parseRequestRate(given);
  if (rate === undefined)
    throw invalid`${ref} "${given}" must be requests per second or minute, like 100/s or 6000/m, off, or ${DEFAULT_KEY_RATE}`;
  return rate;
}

export async function createApiKey(
  deps: Pick<CommandDeps, 'sql' | 'secret'>,
  input: CreateApiKeyInput,
  actor: Actor,
): Promise<CreatedApiKey> {
  const field = fieldsOf<CreateApiKeyInput>();
  const workspace = await findWorkspace(deps, input.workspace);
  // Every rule is checked, so a form shows all its refusals at once.
  const checks = refuseAll();
  const abilities =
    checks.check(() => {
      if (input.abilities === undefined) throw invalid`${field('abilities')} is required`;
      const given = [...new Set(input.abilities.map((item) => item.trim()).filter(Boolean))];
      const unknown = given.filter((ability) => !isAbility(ability));
      if (given.length === 0 || unknown.length > 0) {
        throw invalid`${field('abilities')} must be a comma-separated list of ${ABILITIES.join(', ')}${
          unknown.length ? ` (unknown: ${unknown.join(', ')})` : ''
        }`;
      }
      return given;
    }) ?? [];
  const provider = optionalText(input.provider);
  const failoverRoute = optionalText(input.failoverRoute);
  if (provider && failoverRoute) {
    checks.check(() => {
      throw invalid`${field('provider')} and ${field('failoverRoute')} are exclusive`;
    });
  } else {
    // Sends with the key would all be refused (422), so refuse the key instead.
    if (provider)
      await checks.checkAsync(() => checkProvider(deps, workspace, provider, field('provider')));
    if (failoverRoute)
      await checks.checkAsync(() =>
        checkFailoverRoute(deps, workspace, failoverRoute, field('failoverRoute')),
      );
  }
  const rate = checks.check(() => parseKeyRate(input.rate, field('rate'))) ?? null;
  const email = optionalText(input.user);
  const userId = email ? await findMemberUserId(deps.sql, workspace.id, email) : null;
  if (email && userId === undefined)
    checks.check(() => {
      throw invalid`${email} is not a member of ${workspace.slug}`;
    });
  checks.done();
  const { token, prefix } = issueApiKeyToken();
  const name = optionalText(input.name) ?? null;
  const id = await deps.sql.begin(async (tx) => {
    const { id } = await insertApiKey(tx, {
      workspaceId: workspace.id,
      userId: userId ?? null,
      name,
      prefix,
      tokenHash: keyedHash(deps.secret, 'api-key-hash', token),
      abilities: abilities.filter(isAbility),
      routingType: provider ? 'direct' : failoverRoute ? 'failover' : null,
      providerSlug: provider ?? null,
      failoverRouteSlug: failoverRoute ?? null,
      rateLimit: rate,
    });
    const rateGiven = optionalText(input.rate);
    await writeAudit(tx, actor, workspace.id, {
      action: 'api_key.created',
      target: `API key ${prefix}`,
      details: {
        abilities: abilities.join(','),
        name,
        provider: provider ?? null,
        failover_route: failoverRoute ?? null,
        // A console member makes keys for themselves; the operator may name another member.
        ...(email && actor.kind !== 'member' && { user: email }),
        ...(rateGiven !== undefined && { rate: rateGiven }),
      },
    });
    return id;
  });
  return { id, token, prefix, abilities: abilities.filter(isAbility), rate };
}

/** The workspace's keys (prefix, abilities, routing, dates; never a token), live ones first. */
export async function listWorkspaceApiKeys(
  deps: Pick<CommandDeps, 'sql'>,
  input: { workspace?: string },
): Promise<ApiKeyListing[]> {
  const workspace = await findWorkspace(deps, input.workspace);
  return listApiKeys(deps.sql, workspace.id);
}

/**
 * `false` when the key was already revoked (revoking is idempotent). Given a `workspace`, a key
 * of another workspace is not found.
 */
export async function revokeApiKey(
  deps: Pick<CommandDeps, 'sql'>,
  input: { id: number; workspace?: string },
  actor: Actor,
): Promise<{ id: number; newlyRevoked: boolean }> {
  const workspaceId =
    input.workspace === undefined ? undefined : (await findWorkspace(deps, input.workspace)).id;
  const outcome = await deps.sql.begin(async (tx) => {
    const revoked = await revokeApiKeyRow(tx, input.id, workspaceId);
    // A key already revoked is not revoked again, and records nothing.
    if (revoked.outcome === 'revoked')
      await writeAudit(tx, actor, revoked.workspaceId ?? null, {
        action: 'api_key.revoked',
        target: `API key ${revoked.prefix}`,
        details: {},
      });
    return revoked.outcome;
  });
  if (outcome === 'not_found') throw notFound`No API key has the id ${input.id}`;
  return { id: input.id, newlyRevoked: outcome === 'revoked' };
}

/**
 * Sets a key's own request rate, or with `default` lets it follow its workspace's key rate again.
 * Its bucket keeps its tokens, capped at once by a lower rate. Given a `workspace`, a key of
 * another workspace is not found.
 */
export async function setApiKeyRate(
  deps: Pick<CommandDeps, 'sql'>,
  input: { id: number; rate?: string; workspace?: string },
  actor: Actor,
): Promise<{ id: number; rate: KeyRate }> {
  const field = fieldsOf<{ rate: string }>();
  const rate = parseKeyRate(input.rate, field('rate'));
  if (rate === undefined) throw invalid`${field('rate')} is required`;
  const workspaceId =
    input.workspace === undefined ? undefined : (await findWorkspace(deps, input.workspace)).id;
  const outcome = await deps.sql.begin(async (tx) => {
    const updated = await updateApiKeyRate(tx, input.id, rate, workspaceId);
    if (updated.outcome === 'updated')
      await writeAudit(tx, actor, updated.workspaceId ?? null, {
        action: 'api_key.rate_changed',
        target: `API key ${updated.prefix}`,
        details: { rate: rate === null ? DEFAULT_KEY_RATE : formatRequestRate(rate) },
      });
    return updated.outcome;
  });
  if (outcome === 'not_found') throw notFound`No API key has the id ${input.id}`;
  if (outcome === 'revoked') throw conflict`API key ${input.id} is revoked`;
  return { id: input.id, rate };
}
