/** herald template create: options in, use-case, output. */
import { createTemplate } from '../../commands/templates.js';
import type { AdminContext } from '../context.js';
import { type CommandResult, type Options, run, text } from './options.js';
import { type AdminCommand, flag, optional, required } from './table.js';

/** herald template create --workspace <slug> --slug <slug> --body <text> [...] → {"id", "slug"} */
export async function templateCreate(
  context: AdminContext,
  options: Options,
): Promise<CommandResult> {
  const { id, slug, purpose, workspace } = await run(
    createTemplate(context, {
      workspace: text(options, 'workspace'),
      slug: text(options, 'slug'),
      body: text(options, 'body'),
      name: text(options, 'name'),
      purpose: text(options, 'purpose'),
      enabled: options.disabled !== true,
    }),
  );
  return {
    json: { id, slug },
    human: `Created ${purpose} template ${slug} (id ${id}) in ${workspace.slug}`,
  };
}

export const TEMPLATE_COMMANDS: AdminCommand[] = [
  {
    name: 'template create',
    run: templateCreate,
    synopses: [
      [
        [
          required('workspace', '<slug>'),
          required('slug', '<slug>'),
          required('body', '<text>'),
          optional('name', '<name>'),
        ],
        [optional('purpose', 'transactional|marketing'), flag('disabled')],
      ],
    ],
  },
];
