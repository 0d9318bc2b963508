/**
 * Workspace → Providers: the workspace's own SMS providers (list, add and edit a Twilio or SMPP
 * provider, test its connection, enable, disable). Credentials are write-only: an edit form
 * never shows them, and a credential left blank keeps the stored one.
 */
import type { FastifyInstance, FastifyReply } from 'fastify';
import { InputError } from '../../commands/input.js';
import {
  createProvider,
  disableProvider,
  enableProvider,
  findProviderForEdit,
  listWorkspaceProviders,
  type ProviderForEdit,
  testProviderConnection,
  updateProvider,
} from '../../commands/providers/providers.js';
import type { ConnectionTest, ProviderDefinition } from '../../domain/provider-definition.js';
import { can } from '../access.js';
import type { ConsoleContext } from '../context.js';
import { formErrors, orRefusal } from '../form-errors.js';
import type { SignedIn } from '../guard.js';
import { type Form, formOf, redirect, text } from '../http.js';

/** The types a person adds in the console (the simulator is the operator's, for tests). */
const TYPE_NAMES: Record<string, string> = { twilio: 'Twilio', smpp: 'SMPP' };

const LABELS: Record<string, string> = {
  slug: 'Slug',
  name: 'Name',
  type: 'Type',
  messagesPerSecond: 'Messages per second',
  countries: 'Countries',
  accountSid: 'Account SID',
  authToken: 'Auth token',
  from: 'From',
  messagingServiceSid: 'Messaging Service SID',
  baseUrl: 'Base URL',
  host: 'Host',
  port: 'Port',
  systemId: 'System id',
  password: 'Password',
  systemType: 'System type',
  sourceAddr: 'Source address',
  window: 'Window',
};

const HELP: Record<string, string> = {
  accountSid: '"AC" and 32 hexadecimal digits, from the Twilio console.',
  from: 'An E.164 number or an alphanumeric sender id; give this or a Messaging Service SID.',
  messagingServiceSid: '"MG" and 32 hexadecimal digits.',
  baseUrl: "Blank: Twilio's API, https://api.twilio.com.",
  systemId: 'Up to 15 characters.',
  password: 'Up to 8 characters.',
  sourceAddr: 'The sender of messages that have no sender id of their own.',
  window: 'Submissions awaiting an answer at once, 1 to 100 (blank: 10).',
};

/** A type field as the form shows it. */
interface FormField {
  name: string;
  label: string;
  help: string | undefined;
  required: boolean;
  /** A credential: a password input, always empty when shown. */
  secret: boolean;
}

function formFields(type: ProviderDefinition): FormField[] {
  return type.fields.map((field) => ({
    name: field.name,
    label: LABELS[field.name] ?? field.name,
    help: HELP[field.name],
    required: field.required === true,
    secret: field.credential !== undefined,
  }));
}

/** The form's fields as the use-case reads them; credentials as typed (never echoed back). */
function providerInput(form: Form, type: ProviderDefinition) {
  const rate = text(form, 'messagesPerSecond')?.trim();
  const countries = (text(form, 'countries') ?? '')
    .split(',')
    .map((code) => code.trim())
    .filter(Boolean);
  return {
    name: text(form, 'name'),
    requiresSenderId: text(form, 'requiresSenderId') === 'on',
    messagesPerSecond: rate ? Number(rate) : undefined,
    countries: countries.length > 0 ? countries : undefined,
    fields: Object.fromEntries(type.fields.map((field) => [field.name, text(form, field.name)])),
  };
}

/** The form as shown again: every credential field blanked. */
function shownForm(form: Form, type: ProviderDefinition): Form {
  const shown = { ...form };
  for (const field of type.fields) if (field.credential) delete shown[field.name];
  return shown;
}

export async function providerRoutes(
  app: FastifyInstance,
  { context }: { context: ConsoleContext },
) {
  const { deps } = context;
  const consoleTypes = deps.providerTypes.filter((type) => TYPE_NAMES[type.type]);
  const typeOf = (name: string | undefined) => consoleTypes.find((type) => type.type === name);

  async function listPage(
    reply: FastifyReply,
    member: SignedIn,
    status: number,
    extra: { flash?: string; notice?: string } = {},
  ) {
    const { providers } = await listWorkspaceProviders(deps, {
      workspace: member.visitor.workspaceSlug,
    });
    return reply.page(
      'providers',
      {
        title: 'Providers',
        providers,
        typeNames: TYPE_NAMES,
        types: consoleTypes.map((type) => type.type),
        canManage: can(member.visitor, 'providers.manage'),
        ...extra,
      },
      status,
    );
  }

  interface FormPage {
    type: ProviderDefinition;
    form: Form;
    errors?: Record<string, string>;
    /** Editing this provider; absent: adding one. */
    editing?: ProviderForEdit;
    flash?: string;
    connection?: ConnectionTest;
  }

  function formPage(reply: FastifyReply, member: SignedIn, status: number, page: FormPage) {
    const typeName = TYPE_NAMES[page.type.type] ?? page.type.type;
    return reply.page(
      'provider-edit',
      {
        title: page.editing
          ? `Provider ${page.editing.provider.name}`
          : `Add a ${typeName} provider`,
        type: page.type.type,
        typeName,
        fields: formFields(page.type),
        form: page.form,
        errors: page.errors ?? {},
        editing: page.editing,
        flash: page.flash,
        connection: page.connection,
        canManage: can(member.visitor, 'providers.manage'),
      },
      status,
    );
  }

  /** The edit form of a stored provider, as stored; a missing one is the list's notice. */
  async function editPage(
    reply: FastifyReply,
    member: SignedIn,
    slug: string,
    extra: Omit<FormPage, 'type' | 'form' | 'editing'> & { form?: Form; status?: number } = {},
  ) {
    const editing = await orRefusal(() =>
      findProviderForEdit(deps, { workspace: member.visitor.workspaceSlug, slug }),
    );
    const type = editing instanceof InputError ? undefined : typeOf(editing.provider.type);
    if (editing instanceof InputError || !type)
      return listPage(reply, member, 404, { notice: `This workspace has no provider "${slug}".` });
    const { provider } = editing;
    const form: Form = extra.form ?? {
      name: provider.name,
      messagesPerSecond: provider.messagesPerSecond?.toString(),
      countries: editing.countries,
      requiresSenderId: provider.requiresSenderId ? 'on' : undefined,
      ...editing.fields,
    };
    return formPage(reply, member, extra.status ?? 200, { ...extra, type, form, editing });
  }

  app.get<{ Querystring: { enabled?: string; disabled?: string } }>(
    '/providers',
    { config: { action: 'providers.view' } },
    async (request, reply) => {
      const { enabled, disabled } = request.query;
      const flash =
        enabled !== undefined
          ? `${enabled} is enabled: sends may choose it again.`
          : disabled !== undefined
            ? `${disabled} is disabled: sends no longer choose it.`
            : undefined;
      return listPage(reply, request.member, 200, { flash });
    },
  );

  app.get<{ Querystring: { type?: string } }>(
    '/providers/new',
    { config: { action: 'providers.manage' } },
    async (request, reply) => {
      const type = typeOf(request.query.type) ?? consoleTypes[0];
      if (!type) return listPage(reply, request.member, 404);
      return formPage(reply, request.member, 200, { type, form: {} });
    },
  );

  app.post('/providers/new', { config: { action: 'providers.manage' } }, async (request, reply) => {
    const member = request.member;
    const form = formOf(request);
    const type = typeOf(text(form, 'type'));
    if (!type) return listPage(reply, member, 422, { notice: 'Choose Twilio or SMPP.' });
    const created = await orRefusal(() =>
      createProvider(deps, member.actor, {
        workspace: member.visitor.workspaceSlug,
        slug: text(form, 'slug'),
        type: type.type,
        ...providerInput(form, type),
      }),
    );
    if (created instanceof InputError)
      return formPage(reply, member, created.status, {
        type,
        form: shownForm(form, type),
        errors: formErrors(created, LABELS, 'slug'),
      });
    return redirect(request, reply, `${member.base}/providers/${created.slug}/edit?done=created`);
  });

  app.get<{ Params: { slug: string }; Querystring: { done?: string } }>(
    '/providers/:slug/edit',
    { config: { action: 'providers.view' } },
    async (request, reply) => {
      const done = request.query.done;
      const flash =
        done === 'created'
          ? 'The provider was added. Test its connection, then route messages to it with an API key or a failover route.'
          : done === 'saved'
            ? 'The provider was saved.'
            : undefined;
      return editPage(reply, request.member, request.params.slug, { flash });
    },
  );

  app.post<{ Params: { slug: string } }>(
    '/providers/:slug/edit',
    { config: { action: 'providers.manage' } },
    async (request, reply) => {
      const member = request.member;
      const form = formOf(request);
      const slug = request.params.slug;
      const editing = await orRefusal(() =>
        findProviderForEdit(deps, { workspace: member.visitor.workspaceSlug, slug }),
      );
      const type = editing instanceof InputError ? undefined : typeOf(editing.provider.type);
      if (!type) return editPage(reply, member, slug);
      const saved = await orRefusal(() =>
        updateProvider(deps, member.actor, {
          workspace: member.visitor.workspaceSlug,
          slug,
          ...providerInput(form, type),
        }),
      );
      if (saved instanceof InputError)
        return editPage(reply, member, slug, {
          form: shownForm(form, type),
          errors: formErrors(saved, LABELS, 'notice'),
          status: saved.status,
        });
      return redirect(request, reply, `${member.base}/providers/${slug}/edit?done=saved`);
    },
  );

  // Reaches the vendor with the stored credentials: a manager's, as it uses them.
  app.post<{ Params: { slug: string } }>(
    '/providers/:slug/test',
    { config: { action: 'providers.manage' } },
    async (request, reply) => {
      const member = request.member;
      const slug = request.params.slug;
      const tested = await orRefusal(() =>
        testProviderConnection(deps, { workspace: member.visitor.workspaceSlug, slug }),
      );
      if (tested instanceof InputError) return editPage(reply, member, slug);
      return editPage(reply, member, slug, { connection: tested.result });
    },
  );

  for (const active of [true, false]) {
    app.post<{ Params: { slug: string } }>(
      `/providers/:slug/${active ? 'enable' : 'disable'}`,
      { config: { action: 'providers.manage' } },
      async (request, reply) => {
        const member = request.member;
        const input = { workspace: member.visitor.workspaceSlug, slug: request.params.slug };
        const changed = await orRefusal(() =>
          active
            ? enableProvider(deps, member.actor, input)
            : disableProvider(deps, member.actor, input),
        );
        if (changed instanceof InputError)
          return listPage(reply, member, changed.status, {
            notice: changed.render((field) => LABELS[field] ?? field),
          });
        const done = active ? 'enabled' : 'disabled';
        return redirect(request, reply, `${member.base}/providers?${done}=${changed.slug}`);
      },
    );
  }
}
