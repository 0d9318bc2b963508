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
import { orRefusal } from '../form-errors.js';
import { formPage } from '../form-page.js';
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

/** The edit form's fields as the provider is stored (credentials never shown). */
function storedForm(editing: ProviderForEdit): Form {
  const { provider } = editing;
  return {
    name: provider.name,
    messagesPerSecond: provider.messagesPerSecond?.toString(),
    countries: editing.countries,
    requiresSenderId: provider.requiresSenderId ? 'on' : undefined,
    ...editing.fields,
  };
}

const FLASH: Record<string, string> = {
  created:
    'The provider was added. Test its connection, then route messages to it with an API key or a failover route.',
  saved: 'The provider was saved.',
};

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

  const listPage = formPage({
    view: 'providers',
    labels: LABELS,
    load: async ({ visitor }) => ({
      title: 'Providers',
      providers: (await listWorkspaceProviders(deps, { workspace: visitor.workspaceSlug }))
        .providers,
      typeNames: TYPE_NAMES,
      types: consoleTypes.map((type) => type.type),
      canManage: can(visitor, 'providers.manage'),
    }),
  });

  /** The add form of a type, or the edit form of a stored provider (`editing`). */
  const providerPage = formPage<{
    type: ProviderDefinition;
    editing?: ProviderForEdit;
    connection?: ConnectionTest;
  }>({
    view: 'provider-edit',
    labels: LABELS,
    fallbackField: ({ editing }) => (editing ? 'notice' : 'slug'),
    load: async ({ visitor }, { type, editing, connection }) => {
      const typeName = TYPE_NAMES[type.type] ?? type.type;
      return {
        title: editing ? `Provider ${editing.provider.name}` : `Add a ${typeName} provider`,
        type: type.type,
        typeName,
        fields: formFields(type),
        editing,
        connection,
        canManage: can(visitor, 'providers.manage'),
        form: editing ? storedForm(editing) : {},
      };
    },
    shownAgain: (form, { type }) => shownForm(form, type),
  });

  /** The provider the URL names, with its type; undefined once the list said there is none. */
  async function editingOf(reply: FastifyReply, slug: string) {
    const editing = await orRefusal(() =>
      findProviderForEdit(deps, { workspace: reply.request.member.visitor.workspaceSlug, slug }),
    );
    const type = editing instanceof InputError ? undefined : typeOf(editing.provider.type);
    if (editing instanceof InputError || !type) {
      await listPage.show(reply, 404, {
        errors: { notice: `This workspace has no provider "${slug}".` },
      });
      return undefined;
    }
    return { type, editing };
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
      return listPage.show(reply, 200, { flash });
    },
  );

  app.get<{ Querystring: { type?: string } }>(
    '/providers/new',
    { config: { action: 'providers.manage' } },
    async (request, reply) => {
      const type = typeOf(request.query.type) ?? consoleTypes[0];
      if (!type) return listPage.show(reply, 404);
      return providerPage.show(reply, 200, { type });
    },
  );

  app.post('/providers/new', { config: { action: 'providers.manage' } }, async (request, reply) => {
    const type = typeOf(text(formOf(request), 'type'));
    if (!type) return listPage.show(reply, 422, { errors: { notice: 'Choose Twilio or SMPP.' } });
    return providerPage.submit(reply, {
      state: { type },
      run: (form, { visitor, actor }) =>
        createProvider(deps, actor, {
          workspace: visitor.workspaceSlug,
          slug: text(form, 'slug'),
          type: type.type,
          ...providerInput(form, type),
        }),
      done: (created, { base }) =>
        redirect(request, reply, `${base}/providers/${created.slug}/edit?done=created`),
    });
  });

  app.get<{ Params: { slug: string }; Querystring: { done?: string } }>(
    '/providers/:slug/edit',
    { config: { action: 'providers.view' } },
    async (request, reply) => {
      const found = await editingOf(reply, request.params.slug);
      if (!found) return reply;
      return providerPage.show(reply, 200, { ...found, flash: FLASH[request.query.done ?? ''] });
    },
  );

  app.post<{ Params: { slug: string } }>(
    '/providers/:slug/edit',
    { config: { action: 'providers.manage' } },
    async (request, reply) => {
      const slug = request.params.slug;
      const found = await editingOf(reply, slug);
      if (!found) return reply;
      return providerPage.submit(reply, {
        state: found,
        run: (form, { visitor, actor }) =>
          updateProvider(deps, actor, {
            workspace: visitor.workspaceSlug,
            slug,
            ...providerInput(form, found.type),
          }),
        done: (_, { base }) =>
          redirect(request, reply, `${base}/providers/${slug}/edit?done=saved`),
      });
    },
  );

  // Reaches the vendor with the stored credentials: a manager's, as it uses them.
  app.post<{ Params: { slug: string } }>(
    '/providers/:slug/test',
    { config: { action: 'providers.manage' } },
    async (request, reply) => {
      const slug = request.params.slug;
      const found = await editingOf(reply, slug);
      if (!found) return reply;
      const tested = await orRefusal(() =>
        testProviderConnection(deps, { workspace: request.member.visitor.workspaceSlug, slug }),
      );
      const connection = tested instanceof InputError ? undefined : tested.result;
      return providerPage.show(reply, 200, { ...found, connection });
    },
  );

  for (const active of [true, false]) {
    app.post<{ Params: { slug: string } }>(
      `/providers/:slug/${active ? 'enable' : 'disable'}`,
      { config: { action: 'providers.manage' } },
      async (request, reply) =>
        listPage.act(reply, {
          run: ({ visitor, actor }) => {
            const input = { workspace: visitor.workspaceSlug, slug: request.params.slug };
            return active
              ? enableProvider(deps, actor, input)
              : disableProvider(deps, actor, input);
          },
          done: (changed, { base }) =>
            redirect(
              request,
              reply,
              `${base}/providers?${active ? 'enabled' : 'disabled'}=${changed.slug}`,
            ),
        }),
    );
  }
}
