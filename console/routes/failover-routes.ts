/**
 * Workspace → Failover routes: ordered lists of the workspace's providers (and `own`), tried in
 * turn. The editor works without JavaScript: the order travels in the form, and the Up, Down,
 * Remove and Add buttons post it back rearranged until Save sends it to the use-case.
 */
import type { FastifyInstance, FastifyReply } from 'fastify';
import { InputError } from '../../commands/input.js';
import {
  createFailoverRoute,
  deleteFailoverRoute,
  listWorkspaceFailoverRoutes,
  updateFailoverRoute,
} from '../../commands/providers/failover-routes.js';
import { listWorkspaceProviders } from '../../commands/providers/providers.js';
import { OWN_PROVIDER_SLUG } from '../../domain/provider-definition.js';
import { can } from '../access.js';
import type { ConsoleContext } from '../context.js';
import { formErrors, orRefusal } from '../form-errors.js';
import type { SignedIn } from '../guard.js';
import { type Form, formOf, list, redirect, text } from '../http.js';

const LABELS: Record<string, string> = { slug: 'Slug', name: 'Name', providers: 'Providers' };
const MAX_PROVIDERS = 5;

/** What the editor's button asks: save, or rearrange the list first. */
type Step = { kind: 'save' } | { kind: 'add' } | { kind: 'up' | 'down' | 'remove'; index: number };

function stepOf(form: Form): Step {
  const op = text(form, 'op') ?? 'save';
  if (op === 'add') return { kind: 'add' };
  const moved = /^(up|down|remove)-(\d{1,2})$/.exec(op);
  if (moved) return { kind: moved[1] as 'up' | 'down' | 'remove', index: Number(moved[2]) };
  return { kind: 'save' };
}

/** The order after the step; unchanged for a step that does not apply. */
function rearranged(order: string[], step: Step, added: string | undefined): string[] {
  const next = [...order];
  if (step.kind === 'add') {
    if (added && !next.includes(added) && next.length < MAX_PROVIDERS) next.push(added);
    return next;
  }
  if (step.kind === 'save') return next;
  const { index } = step;
  if (index >= next.length) return next;
  if (step.kind === 'remove') next.splice(index, 1);
  const other = step.kind === 'up' ? index - 1 : step.kind === 'down' ? index + 1 : -1;
  if (other >= 0 && other < next.length)
    [next[index], next[other]] = [next[other] as string, next[index] as string];
  return next;
}

export async function failoverRouteRoutes(
  app: FastifyInstance,
  { context }: { context: ConsoleContext },
) {
  const { deps } = context;

  /** Every provider a route may name: `own` first, then the workspace's by slug. */
  async function choices(member: SignedIn) {
    const { providers } = await listWorkspaceProviders(deps, {
      workspace: member.visitor.workspaceSlug,
    });
    return [
      { slug: OWN_PROVIDER_SLUG, name: "Herald's provider", active: true },
      ...providers.map(({ slug, name, active }) => ({ slug, name, active })),
    ];
  }

  async function listPage(
    reply: FastifyReply,
    member: SignedIn,
    status: number,
    extra: { flash?: string; notice?: string } = {},
  ) {
    const [{ routes }, providers] = await Promise.all([
      listWorkspaceFailoverRoutes(deps, { workspace: member.visitor.workspaceSlug }),
      choices(member),
    ]);
    return reply.page(
      'failover-routes',
      {
        title: 'Failover routes',
        routes,
        names: Object.fromEntries(providers.map((provider) => [provider.slug, provider.name])),
        canManage: can(member.visitor, 'providers.manage'),
        ...extra,
      },
      status,
    );
  }

  async function editorPage(
    reply: FastifyReply,
    member: SignedIn,
    status: number,
    page: {
      /** The route's slug when editing; absent: a new route. */
      editing?: string;
      form: { slug?: string; name?: string; providers: string[] };
      errors?: Record<string, string>;
    },
  ) {
    const providers = await choices(member);
    return reply.page(
      'failover-route-edit',
      {
        title: page.editing ? `Failover route ${page.editing}` : 'New failover route',
        editing: page.editing,
        form: page.form,
        errors: page.errors ?? {},
        providers,
        names: Object.fromEntries(providers.map((provider) => [provider.slug, provider.name])),
        maxProviders: MAX_PROVIDERS,
      },
      status,
    );
  }

  app.get<{ Querystring: { done?: string } }>(
    '/failover-routes',
    { config: { action: 'providers.view' } },
    async (request, reply) => {
      const done = request.query.done;
      const flash =
        done === 'created'
          ? 'The failover route was created.'
          : done === 'saved'
            ? 'The failover route was saved.'
            : done === 'deleted'
              ? 'The failover route was deleted.'
              : undefined;
      return listPage(reply, request.member, 200, { flash });
    },
  );

  app.get(
    '/failover-routes/new',
    { config: { action: 'providers.manage' } },
    async (request, reply) => editorPage(reply, request.member, 200, { form: { providers: [] } }),
  );

  app.get<{ Params: { slug: string } }>(
    '/failover-routes/:slug/edit',
    { config: { action: 'providers.manage' } },
    async (request, reply) => {
      const member = request.member;
      const { routes } = await listWorkspaceFailoverRoutes(deps, {
        workspace: member.visitor.workspaceSlug,
      });
      const route = routes.find((each) => each.slug === request.params.slug);
      if (!route)
        return listPage(reply, member, 404, {
          notice: `This workspace has no failover route "${request.params.slug}".`,
        });
      return editorPage(reply, member, 200, {
        editing: route.slug,
        form: { name: route.name, providers: route.providerSlugs },
      });
    },
  );

  /** One post of the editor: a rearranging step shows the form again; Save saves it. */
  async function editorPost(
    member: SignedIn,
    form: Form,
    editing: string | undefined,
    reply: FastifyReply,
    done: () => FastifyReply,
  ) {
    const step = stepOf(form);
    const order = rearranged(list(form, 'providers'), step, text(form, 'add'));
    const shown = { slug: text(form, 'slug'), name: text(form, 'name'), providers: order };
    if (step.kind !== 'save') return editorPage(reply, member, 200, { editing, form: shown });
    const input = {
      workspace: member.visitor.workspaceSlug,
      slug: editing ?? shown.slug,
      name: shown.name,
      providers: order,
    };
    const saved = await orRefusal(() =>
      editing
        ? updateFailoverRoute(deps, member.actor, input)
        : createFailoverRoute(deps, member.actor, input),
    );
    if (saved instanceof InputError)
      return editorPage(reply, member, saved.status, {
        editing,
        form: shown,
        errors: formErrors(saved, LABELS, editing ? 'providers' : 'slug'),
      });
    return done();
  }

  app.post(
    '/failover-routes/new',
    { config: { action: 'providers.manage' } },
    async (request, reply) =>
      editorPost(request.member, formOf(request), undefined, reply, () =>
        redirect(request, reply, `${request.member.base}/failover-routes?done=created`),
      ),
  );

  app.post<{ Params: { slug: string } }>(
    '/failover-routes/:slug/edit',
    { config: { action: 'providers.manage' } },
    async (request, reply) =>
      editorPost(request.member, formOf(request), request.params.slug, reply, () =>
        redirect(request, reply, `${request.member.base}/failover-routes?done=saved`),
      ),
  );

  app.post<{ Params: { slug: string } }>(
    '/failover-routes/:slug/delete',
    { config: { action: 'providers.manage' } },
    async (request, reply) => {
      const member = request.member;
      const deleted = await orRefusal(() =>
        deleteFailoverRoute(deps, member.actor, {
          workspace: member.visitor.workspaceSlug,
          slug: request.params.slug,
        }),
      );
      if (deleted instanceof InputError)
        return listPage(reply, member, deleted.status, {
          notice: deleted.render((field) => LABELS[field] ?? field),
        });
      return redirect(request, reply, `${member.base}/failover-routes?done=deleted`);
    },
  );
}
