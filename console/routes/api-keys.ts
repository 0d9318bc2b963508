/**
 * Developer Tools → API keys: create (token shown once; optional routing: a direct provider or a
 * failover route of the workspace, and an optional rate limit, as `herald key create`), list,
 * revoke.
 */

import type { FastifyInstance, FastifyReply } from 'fastify';
import { presentGuard, showGuard } from '../../commands/fraud-guard/settings.js';
import { InputError } from '../../commands/input.js';
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
import { formErrors, orRefusal } from '../form-errors.js';
import type { SignedIn } from '../guard.js';
import { type Form, formOf, list, redirect, text } from '../http.js';

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

/** The use-case names the provider or route field; the form has one picker for both. */
function pickerErrors(errors: Record<string, string>): Record<string, string> {
  const { provider, failoverRoute, ...others } = errors;
  const routing = provider ?? failoverRoute;
  return routing === undefined ? others : { ...others, routing };
}

export async function apiKeyRoutes(app: FastifyInstance, { context }: { context: ConsoleContext }) {
  const { deps } = context;

  async function page(
    reply: FastifyReply,
    signedIn: SignedIn,
    status: number,
    extra: {
      created?: CreatedApiKey;
      form?: Form;
      errors?: Record<string, string>;
      flash?: string;
    } = {},
  ) {
    const workspace = signedIn.visitor.workspaceSlug;
    const [keys, routing, guard] = await Promise.all([
      listWorkspaceApiKeys(deps, { workspace }),
      listRoutingChoices(deps, { workspace }),
      showGuard(deps, { workspace }),
    ]);
    // What a key without a rate of its own is held to (Fraud guard's API key rate).
    const keyRate = presentGuard(guard).key_rate;
    const created = extra.created && {
      ...extra.created,
      rateText:
        extra.created.rate === null
          ? `the workspace's key rate (${keyRate})`
          : formatRequestRate(extra.created.rate),
    };
    return reply.page(
      'api-keys',
      {
        title: 'API keys',
        keys,
        abilities: ABILITIES,
        providers: routing.providers,
        failoverRoutes: routing.failoverRoutes,
        canManage: can(signedIn.visitor, 'api_keys.manage'),
        keyRate,
        created,
        form: extra.form ?? { abilities: ['messages:send', 'messages:read'] },
        errors: extra.errors ?? {},
        flash: extra.flash,
      },
      status,
    );
  }

  app.get<{ Querystring: { done?: string } }>(
    '/developer/api-keys',
    { config: { action: 'api_keys.view' } },
    async (request, reply) => {
      const signedIn = request.member;
      return page(reply, signedIn, 200, { flash: FLASH[request.query.done ?? ''] });
    },
  );

  app.post(
    '/developer/api-keys',
    { config: { action: 'api_keys.manage' } },
    async (request, reply) => {
      const signedIn = request.member;
      const form = formOf(request);
      const routing = routingOf(text(form, 'routing'));
      if (!routing) {
        return page(reply, signedIn, 422, {
          form,
          errors: { routing: 'Routing must be none, a direct provider or a failover route.' },
        });
      }
      const created = await orRefusal(() =>
        createApiKey(
          deps,
          {
            workspace: signedIn.visitor.workspaceSlug,
            user: signedIn.visitor.email,
            name: text(form, 'name'),
            abilities: list(form, 'abilities'),
            rate: text(form, 'rate'),
            ...routing,
          },
          signedIn.actor,
        ),
      );
      if (created instanceof InputError) {
        return page(reply, signedIn, 422, {
          form,
          errors: pickerErrors(formErrors(created, LABELS, 'abilities')),
        });
      }
      return page(reply, signedIn, 201, { created });
    },
  );

  app.post<{ Params: { id: string } }>(
    '/developer/api-keys/:id/revoke',
    { config: { action: 'api_keys.manage' } },
    async (request, reply) => {
      const signedIn = request.member;
      const id = Number(request.params.id);
      const keys = await listWorkspaceApiKeys(deps, { workspace: signedIn.visitor.workspaceSlug });
      const key = Number.isSafeInteger(id)
        ? keys.find((candidate) => candidate.id === id)
        : undefined;
      if (!key) {
        return page(reply, signedIn, 404, {
          errors: { revoke: 'This workspace has no such API key.' },
        });
      }
      await revokeApiKey(deps, { id, workspace: signedIn.visitor.workspaceSlug }, signedIn.actor);
      return redirect(request, reply, `${signedIn.base}/developer/api-keys?done=revoked`);
    },
  );
}
