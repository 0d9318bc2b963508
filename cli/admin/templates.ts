/** herald template create|list|update|delete: options in, use-case, output. */
import {
  createTemplate,
  deleteTemplate,
  listTemplates,
  type TemplateListing,
  updateTemplate,
} from '../../commands/messaging/templates.js';
import type { AdminContext } from '../context.js';
import { listing } from '../output.js';
import {
  booleanOption,
  type CommandResult,
  optional as given,
  type Options,
  run,
  text,
} from './options.js';
import { type AdminCommand, flag, optional, required } from './table.js';

const presentTemplate = (template: TemplateListing) => ({
  id: template.id,
  slug: template.slug,
  name: template.name,
  body: template.body,
  purpose: template.purpose,
  enabled: template.enabled,
  created_at: template.createdAt.toISOString(),
});

const describeTemplate = (template: TemplateListing) =>
  `${template.slug} (id ${template.id}): ${template.name}, ${template.purpose}, ` +
  `${template.enabled ? 'enabled' : 'disabled'}: ${template.body}`;

/** herald template create --workspace <slug> --slug <slug> --body <text> [...] → {"id", "slug"} */
export async function templateCreate(
  context: AdminContext,
  options: Options,
): Promise<CommandResult> {
  const { id, slug, purpose, workspace } = await run(
    createTemplate(
      context,
      {
        workspace: text(options, 'workspace'),
        slug: text(options, 'slug'),
        body: text(options, 'body'),
        name: text(options, 'name'),
        purpose: text(options, 'purpose'),
        enabled: options.disabled !== true,
      },
      context.actor,
    ),
  );
  return {
    json: { id, slug },
    human: `Created ${purpose} template ${slug} (id ${id}) in ${workspace.slug}`,
  };
}

/** herald template list --workspace <slug> → {"templates": [...]}, by slug */
export async function templateList(
  context: AdminContext,
  options: Options,
): Promise<CommandResult> {
  const templates = await run(listTemplates(context, { workspace: text(options, 'workspace') }));
  return {
    json: { templates: templates.map(presentTemplate) },
    human: listing(
      templates,
      ['ID', 'SLUG', 'NAME', 'PURPOSE', 'STATUS', 'BODY'],
      (template) => [
        template.id,
        template.slug,
        template.name,
        template.purpose,
        template.enabled ? 'enabled' : 'disabled',
        template.body,
      ],
      `${given(options, 'workspace')} has no templates`,
    ),
  };
}

/**
 * herald template update --workspace <slug> --slug <slug> [--name] [--body] [--purpose]
 *   [--enabled true|false] → the template; what is not given keeps its value.
 */
export async function templateUpdate(
  context: AdminContext,
  options: Options,
): Promise<CommandResult> {
  const enabled = booleanOption(options, 'enabled');
  const { template, workspace } = await run(
    updateTemplate(
      context,
      {
        workspace: text(options, 'workspace'),
        slug: text(options, 'slug'),
        name: text(options, 'name'),
        body: text(options, 'body'),
        purpose: text(options, 'purpose'),
        enabled,
      },
      context.actor,
    ),
  );
  return {
    json: presentTemplate(template),
    human: `Updated template ${describeTemplate(template)} in ${workspace.slug}`,
  };
}

/** herald template delete --workspace <slug> --slug <slug> → {"slug", "deleted": true} */
export async function templateDelete(
  context: AdminContext,
  options: Options,
): Promise<CommandResult> {
  const { slug, workspace } = await run(
    deleteTemplate(
      context,
      {
        workspace: text(options, 'workspace'),
        slug: text(options, 'slug'),
      },
      context.actor,
    ),
  );
  return {
    json: { slug, deleted: true },
    human: `Deleted template ${slug} from ${workspace.slug}`,
  };
}

const WORKSPACE = required('workspace', '<slug>');
const SLUG = required('slug', '<slug>');

export const TEMPLATE_COMMANDS: AdminCommand[] = [
  {
    name: 'template create',
    run: templateCreate,
    synopses: [
      [
        [WORKSPACE, SLUG, required('body', '<text>'), optional('name', '<name>')],
        [optional('purpose', 'transactional|marketing'), flag('disabled')],
      ],
    ],
  },
  { name: 'template list', run: templateList, synopses: [[[WORKSPACE]]] },
  {
    name: 'template update',
    run: templateUpdate,
    synopses: [
      [
        [WORKSPACE, SLUG, optional('name', '<name>'), optional('body', '<text>')],
        [optional('purpose', 'transactional|marketing'), optional('enabled', 'true|false')],
      ],
    ],
  },
  { name: 'template delete', run: templateDelete, synopses: [[[WORKSPACE, SLUG]]] },
];
