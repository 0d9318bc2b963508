/** herald workspace create|update|list: options in, use-case, output. */
import {
  createWorkspace,
  listAllWorkspaces,
  updateWorkspaceSettings,
} from '../../commands/team/workspaces.js';
import { formatQuietHours } from '../../domain/quiet-hours.js';
import { type AdminContext, operatorActor } from '../context.js';
import { listing, tableTime } from '../output.js';
import { booleanOption, type CommandResult, type Options, run, text } from './options.js';
import { type AdminCommand, optional as optionalOption, required } from './table.js';

export async function workspaceCreate(
  context: AdminContext,
  options: Options,
): Promise<CommandResult> {
  const workspace = await run(
    createWorkspace(
      context,
      { name: text(options, 'name'), slug: text(options, 'slug') },
      operatorActor(),
    ),
  );
  return {
    json: { id: workspace.id, slug: workspace.slug },
    human: `Created workspace ${workspace.slug} (id ${workspace.id})`,
  };
}

/** herald workspace update --slug <slug> [--name <name>] [--api-enabled true|false] [--help-text <text>|off] [--quiet-hours HH:MM-HH:MM|off] */
export async function workspaceUpdate(
  context: AdminContext,
  options: Options,
): Promise<CommandResult> {
  const workspace = await run(
    updateWorkspaceSettings(
      context,
      {
        slug: text(options, 'slug'),
        name: text(options, 'name'),
        apiEnabled: booleanOption(options, 'api-enabled'),
        helpText: text(options, 'help-text'),
        quietHours: text(options, 'quiet-hours'),
      },
      operatorActor(),
    ),
  );
  return {
    json: {
      id: workspace.id,
      slug: workspace.slug,
      name: workspace.name,
      api_enabled: workspace.apiEnabled,
      help_text: workspace.helpText,
      quiet_hours: workspace.quietHours && formatQuietHours(workspace.quietHours),
    },
    human: `Updated workspace ${workspace.slug} (id ${workspace.id}): name "${workspace.name}", API ${workspace.apiEnabled ? 'enabled' : 'disabled'}, HELP ${workspace.helpText === null ? 'not answered' : 'answered'}, quiet hours ${workspace.quietHours ? formatQuietHours(workspace.quietHours) : 'off'}`,
  };
}

/** herald workspace list → {"workspaces": [...]}, by slug */
export async function workspaceList(context: AdminContext): Promise<CommandResult> {
  const workspaces = await listAllWorkspaces(context);
  return {
    json: {
      workspaces: workspaces.map((workspace) => ({
        id: workspace.id,
        slug: workspace.slug,
        name: workspace.name,
        api_enabled: workspace.apiEnabled,
        created_at: workspace.createdAt.toISOString(),
      })),
    },
    human: listing(
      workspaces,
      ['ID', 'SLUG', 'NAME', 'API', 'CREATED (UTC)'],
      (workspace) => [
        workspace.id,
        workspace.slug,
        workspace.name,
        workspace.apiEnabled ? 'enabled' : 'disabled',
        tableTime(workspace.createdAt),
      ],
      'No workspaces yet: herald workspace create --name <name>',
    ),
  };
}

export const WORKSPACE_COMMANDS: AdminCommand[] = [
  {
    name: 'workspace create',
    run: workspaceCreate,
    synopses: [[[required('name', '<name>'), optionalOption('slug', '<slug>')]]],
  },
  {
    name: 'workspace update',
    run: workspaceUpdate,
    synopses: [
      [
        [
          required('slug', '<slug>'),
          optionalOption('name', '<name>'),
          optionalOption('api-enabled', 'true|false'),
          optionalOption('help-text', '<text>|off'),
          optionalOption('quiet-hours', 'HH:MM-HH:MM|off'),
        ],
      ],
    ],
  },
  { name: 'workspace list', run: workspaceList, synopses: [[[]]] },
];
