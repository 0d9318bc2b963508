/**
 * Workspace → Failover routes: ordered lists of the workspace's providers (and `own`), tried in
 * turn. The editor works without JavaScript: the order travels in the form, and the Up, Down,
 * Remove and Add buttons post it back rearranged until Save sends it to the use-case.
 */
import type { FastifyInstance, FastifyReply } from 'fastify';
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
import { formPage } from '../form-page.js';
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

/** The editor's fields: the order as posted (the slug only for a new route). */
interface RouteForm {
  slug?: string;
  name?: string;
  providers: string[];
}

const routeForm = (form: Form): RouteForm => ({
  slug: text(form, 'slug'),
  name: text(form, 'name'),
  providers: list(form, 'providers'),
});

const FLASH: Record<string, string> = {
  created: 'The failover route was created.',
  saved: 'The failover route was saved.',
  deleted: 'The failover route was deleted.',
};

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

  const namesOf = (providers: { slug: string; name: string }[]) =>
    Object.fromEntries(providers.map((provider) => [provider.slug, provider.name]));

  const listPage = formPage({
    view: 'failover-routes',
    labels: LABELS,
    load: async (member) => {
      const [{ routes }, providers] = await Promise.all([
        listWorkspaceFailoverRoutes(deps, { workspace: member.visitor.workspaceSlug }),
        choices(member),
      ]);
      return {
        title: 'Failover routes',
        routes,
        names: namesOf(providers),
        canManage: can(member.visitor, 'providers.manage'),
      };
    },
  });

  /** The editor of a new route, or of the route `editing` names. */
  const editor = formPage<{ editing?: string }, RouteForm>({
    view: 'failover-route-edit',
    labels: LABELS,
    // An edit has no slug field: what names no field stands under the providers.
    fallbackField: ({ editing }) => (editing ? 'providers' : 'slug'),
    load: async (member, { editing }) => {
      const providers = await choices(member);
      return {
        title: editing ? `Failover route ${editing}` : 'New failover route',
        editing,
        providers,
        names: namesOf(providers),
        maxProviders: MAX_PROVIDERS,
        form: { providers: [] },
      };
    },
    shownAgain: routeForm,
  });

  app.get<{ Querystring: { done?: string } }>(
    '/failover-routes',
    { config: { action: 'providers.view' } },
    async (request, reply) => listPage.show(reply, 200, { flash: FLASH[request.query.done ?? ''] }),
  );

  app.get('/failover-routes/new', { config: { action: 'providers.manage' } }, async (_, reply) =>
    editor.show(reply, 200),
  );

  app.get<{ Params: { slug: string } }>(
    '/failover-routes/:slug/edit',
    { config: { action: 'providers.manage' } },
    async (request, reply) => {
      const { routes } = await listWorkspaceFailoverRoutes(deps, {
        workspace: request.member.visitor.workspaceSlug,
      });
      const route = routes.find((each) => each.slug === request.params.slug);
      if (!route)
        return listPage.show(reply, 404, {
          errors: { notice: `This workspace has no failover route "${request.params.slug}".` },
        });
      return editor.show(reply, 200, {
        editing: route.slug,
        form: { name: route.name, providers: route.providerSlugs },
      });
    },
  );

  /** One post of the editor: a rearranging step shows the form again; Save saves it. */
  async function editorPost(reply: FastifyReply, editing: string | undefined, done: string) {
    const form = formOf(reply.request);
    const step = stepOf(form);
    if (step.kind !== 'save') {
      const order = rearranged(list(form, 'providers'), step, text(form, 'add'));
      return editor.show(reply, 200, { editing, form: { ...routeForm(form), providers: order } });
    }
    return editor.submit(reply, {
      state: { editing },
      run: (form, { visitor, actor }) => {
        const input = {
          workspace: visitor.workspaceSlug,
          slug: editing ?? text(form, 'slug'),
          name: text(form, 'name'),
          providers: list(form, 'providers'),
        };
        return editing
          ? updateFailoverRoute(deps, actor, input)
          : createFailoverRoute(deps, actor, input);
      },
      done: (_, { base }) => redirect(reply.request, reply, `${base}/failover-routes?done=${done}`),
    });
  }

  app.post('/failover-routes/new', { config: { action: 'providers.manage' } }, async (_, reply) =>
    editorPost(reply, undefined, 'created'),
  );

  app.post<{ Params: { slug: string } }>(
    '/failover-routes/:slug/edit',
    { config: { action: 'providers.manage' } },
    async (request, reply) => editorPost(reply, request.params.slug, 'saved'),
  );

  app.post<{ Params: { slug: string } }>(
    '/failover-routes/:slug/delete',
    { config: { action: 'providers.manage' } },
    async (request, reply) =>
      listPage.act(reply, {
        run: ({ visitor, actor }) =>
          deleteFailoverRoute(deps, actor, {
            workspace: visitor.workspaceSlug,
            slug: request.params.slug,
          }),
        done: (_, { base }) => redirect(request, reply, `${base}/failover-routes?done=deleted`),
      }),
  );
}
