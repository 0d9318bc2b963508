/**
 * Developer Tools → API keys: create (token shown once; optional routing: a direct provider or a
 * failover route of the workspace, and an optional rate limit, as `herald key create`), list,
 * revoke.
 */

import type { FastifyInstance } from 'fastify';
import { presentGuard, showGuard } from '../../commands/fraud-guard/settings.js';
import { listRoutingChoices } from '../../commands/providers/routing-choices.js';
import {
  type CreatedApiKey,
  createApiKey,
  listWorkspaceApiKeys,
  revokeApiKey,
} from '../../commands/team/api-keys.js';
import { ABILITIES } from '../../domain/access.js';
import { formatRequestRate } from '../../domain/fraud-guard.js';
import { can } from '../access.js';
import type { ConsoleContext } from '../context.js';
import { formPage } from '../form-page.js';
import { formOf, list, redirect, text } from '../http.js';

const LABELS: Record<string, string> = {
  abilities: 'Abilities',
  provider: 'Direct provider',
  failoverRoute: 'Failover route',
  name: 'Name',
  rate: 'Rate limit',
  user: 'User',
};

const FLASH: Record<string, string> = { revoked: 'The API key was revoked.' };

/**
 * The routing picker's one value: blank (none: the request's choice, else `own`),
 * `provider:<slug>` or `route:<slug>`. Undefined when it is none of these.
 */
function routingOf(
  value: string | undefined,
): { provider?: string; failoverRoute?: string } | undefined {
  if (value === undefined || value.trim() === '') return {};
  const [kind, ...rest] = value.split(':');
  const slug = rest.join(':');
  if (kind === 'provider' && slug !== '') return { provider: slug };
  if (kind === 'route' && slug !== '') return { failoverRoute: slug };
  return undefined;
}

export async function apiKeyRoutes(app: FastifyInstance, { context }: { context: ConsoleContext }) {
  const { deps } = context;

  const page = formPage<{ created?: CreatedApiKey }>({
    view: 'api-keys',
    labels: LABELS,
    fallbackField: 'abilities',
    load: async ({ visitor }, state) => {
      const workspace = visitor.workspaceSlug;
      const [keys, routing, guard] = await Promise.all([
        listWorkspaceApiKeys(deps, { workspace }),
        listRoutingChoices(deps, { workspace }),
        showGuard(deps, { workspace }),
      ]);
      // What a key without a rate of its own is held to (Fraud guard's API key rate).
      const keyRate = presentGuard(guard).key_rate;
      const created = state.created && {
        ...state.created,
        rateText:
          state.created.rate === null
            ? `the workspace's key rate (${keyRate})`
            : formatRequestRate(state.created.rate),
      };
      return {
        title: 'API keys',
        keys,
        abilities: ABILITIES,
        providers: routing.providers,
        failoverRoutes: routing.failoverRoutes,
        canManage: can(visitor, 'api_keys.manage'),
        keyRate,
        created,
        form: { abilities: ['messages:send', 'messages:read'] },
      };
    },
  });

  app.get<{ Querystring: { done?: string } }>(
    '/developer/api-keys',
    { config: { action: 'api_keys.view' } },
    async (request, reply) => page.show(reply, 200, { flash: FLASH[request.query.done ?? ''] }),
  );

  app.post(
    '/developer/api-keys',
    { config: { action: 'api_keys.manage' } },
    async (request, reply) => {
      const form = formOf(request);
      const routing = routingOf(text(form, 'routing'));
      if (!routing) {
        return page.show(reply, 422, {
          form,
          errors: { routing: 'Routing must be none, a direct provider or a failover route.' },
        });
      }
      return page.submit(reply, {
        run: (form, { visitor, actor }) =>
          createApiKey(
            deps,
            {
              workspace: visitor.workspaceSlug,
              user: visitor.email,
              name: text(form, 'name'),
              abilities: list(form, 'abilities'),
              rate: text(form, 'rate'),
              ...routing,
            },
            actor,
          ),
        done: (created) => page.show(reply, 201, { created }),
      });
    },
  );

  app.post<{ Params: { id: string } }>(
    '/developer/api-keys/:id/revoke',
    { config: { action: 'api_keys.manage' } },
    async (request, reply) => {
      const { visitor, actor, base } = request.member;
      const id = Number(request.params.id);
      const keys = await listWorkspaceApiKeys(deps, { workspace: visitor.workspaceSlug });
      const key = Number.isSafeInteger(id)
        ? keys.find((candidate) => candidate.id === id)
        : undefined;
      if (!key) {
        return page.show(reply, 404, {
          errors: { revoke: 'This workspace has no such API key.' },
        });
      }
      await revokeApiKey(deps, { id, workspace: visitor.workspaceSlug }, actor);
      return redirect(request, reply, `${base}/developer/api-keys?done=revoked`);
    },
  );
}
