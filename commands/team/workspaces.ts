/** Workspaces: create one, rename it or switch its API off, and find one by its slug. */

import { findWorkspaceHelpText, setWorkspaceHelpText } from '../../db/inbound-messages.js';
import { findQuietHours, setQuietHours } from '../../db/quiet-hours.js';
import {
  findWorkspaceBySlug,
  insertWorkspace,
  listWorkspaces,
  updateWorkspace,
  type Workspace,
} from '../../db/workspaces.js';
import {
  formatQuietHours,
  parseQuietHours,
  QUIET_HOURS_FORMAT_ERROR,
  type QuietHours,
} from '../../domain/quiet-hours.js';
import { WORKSPACE_SLUG } from '../../domain/request-schema.js';
import { characters } from '../../domain/validation.js';
import type { Actor } from '../actor.js';
import { writeAudit } from '../audit.js';
import type { CommandDeps } from '../deps.js';
import {
  conflict,
  fieldsOf,
  invalid,
  isUniqueViolation,
  listOf,
  notFound,
  optionalText,
  refuseAll,
  requiredText,
} from '../input.js';

type Deps = Pick<CommandDeps, 'sql'>;

const MAX_NAME_LENGTH = 200;

function slugify(name: string): string {
  return name
    .toLowerCase()
    .normalize('NFKD')
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 63)
    .replace(/-+$/, '');
}

/** The workspace an action is in, by its slug (the `workspace` field of every scoped input). */
export async function findWorkspace(deps: Deps, slug: string | undefined): Promise<Workspace> {
  const given = requiredText(slug, { field: 'workspace' });
  const workspace = await findWorkspaceBySlug(deps.sql, given);
  if (!workspace) throw notFound`No workspace has the slug "${given}"`;
  return workspace;
}

/** Every workspace, by slug. */
export async function listAllWorkspaces(deps: Deps): Promise<Workspace[]> {
  return listWorkspaces(deps.sql);
}

export interface CreateWorkspaceInput {
  name?: string;
  /** Derived from the name when not given. */
  slug?: string;
}

export async function createWorkspace(
  deps: Deps,
  input: CreateWorkspaceInput,
  actor: Actor,
): Promise<Workspace> {
  const field = fieldsOf<CreateWorkspaceInput>();
  const name = requiredText(input.name, field('name'));
  if (name.length > MAX_NAME_LENGTH)
    throw invalid`${field('name')} must be at most ${MAX_NAME_LENGTH} characters`;
  const slug = optionalText(input.slug) ?? slugify(name);
  if (!WORKSPACE_SLUG.test(slug)) {
    throw invalid`${field('slug')} "${slug}" must be 1-63 lowercase letters, digits or hyphens, starting and ending with a letter or digit`;
  }
  try {
    return await deps.sql.begin(async (tx) => {
      const workspace = await insertWorkspace(tx, { slug, name });
      await writeAudit(tx, actor, workspace.id, {
        action: 'workspace.created',
        target: `workspace ${slug}`,
        details: { name },
      });
      return workspace;
    });
  } catch (error) {
    if (isUniqueViolation(error))
      throw conflict`A workspace with the slug "${slug}" already exists`;
    throw error;
  }
}

export interface UpdateWorkspaceInput {
  /** The workspace to change. */
  slug?: string;
  name?: string;
  /** Whether the workspace's API keys are accepted at all. */
  apiEnabled?: boolean;
  /** What a HELP reply is answered with (docs/providers.md "Replies"), or `off`: no answer. */
  helpText?: string;
  /** When marketing may go out, recipient's local time (`09:00-20:00`), or `off`. */
  quietHours?: string;
}

/** The longest help text: a message's longest text (1,600 characters, docs/spec.md §8). */
const MAX_HELP_TEXT_LENGTH = 1600;

/** A help text as given: undefined when not, null for `off`. */
function helpTextOf(
  value: string | undefined,
  field: { field: string },
): string | null | undefined {
  const text = optionalText(value);
  if (text === undefined) return undefined;
  if (text.toLowerCase() === 'off') return null;
  if (characters(text) > MAX_HELP_TEXT_LENGTH)
    throw invalid`${field} must be at most ${MAX_HELP_TEXT_LENGTH} characters, or off`;
  return text;
}

/** A quiet hours window as given: undefined when not, null for `off`. */
function quietHoursOf(
  value: string | undefined,
  field: { field: string },
): QuietHours | null | undefined {
  const text = optionalText(value);
  if (text === undefined) return undefined;
  const window = parseQuietHours(text);
  if (window === undefined) throw invalid`${field} ${QUIET_HOURS_FORMAT_ERROR}`;
  return window;
}

/** Renames the workspace, sets its API entitlement and/or its help text; what is not given keeps its value. */
export async function updateWorkspaceSettings(
  deps: Deps,
  input: UpdateWorkspaceInput,
  actor: Actor,
): Promise<Workspace & { helpText: string | null; quietHours: QuietHours | null }> {
  const field = fieldsOf<UpdateWorkspaceInput>();
  const slug = requiredText(input.slug, field('slug'));
  const name = optionalText(input.name);
  // Every rule is checked, so a form shows all its refusals at once.
  const checks = refuseAll();
  if (name !== undefined && characters(name) > MAX_NAME_LENGTH)
    checks.check(() => {
      throw invalid`${field('name')} must be at most ${MAX_NAME_LENGTH} characters`;
    });
  const helpText = checks.check(() => helpTextOf(input.helpText, field('helpText')));
  const quietHours = checks.check(() => quietHoursOf(input.quietHours, field('quietHours')));
  checks.done();
  if (
    name === undefined &&
    input.apiEnabled === undefined &&
    helpText === undefined &&
    quietHours === undefined
  )
    throw invalid`Give at least one of ${listOf([field('name'), field('apiEnabled'), field('helpText'), field('quietHours')])}`;
  return deps.sql.begin(async (tx) => {
    const workspace = await updateWorkspace(tx, slug, {
      ...(name === undefined ? {} : { name }),
      ...(input.apiEnabled === undefined ? {} : { apiEnabled: input.apiEnabled }),
    });
    if (!workspace) throw notFound`No workspace has the slug "${slug}"`;
    const kept =
      helpText === undefined
        ? await findWorkspaceHelpText(tx, workspace.id)
        : ((await setWorkspaceHelpText(tx, slug, helpText))?.helpText ?? null);
    if (quietHours !== undefined) await setQuietHours(tx, slug, quietHours);
    // The settings as asked (the console's Settings and Inbox pages ask one each).
    const changed = {
      ...(name !== undefined && { name }),
      ...(input.apiEnabled !== undefined && { api_enabled: input.apiEnabled }),
      ...(quietHours !== undefined && {
        quiet_hours: quietHours ? formatQuietHours(quietHours) : 'off',
      }),
    };
    const target = `workspace ${workspace.slug}`;
    if (Object.keys(changed).length > 0)
      await writeAudit(tx, actor, workspace.id, {
        action: 'workspace.updated',
        target,
        details: changed,
      });
    // Whether a HELP reply is answered, never the text itself.
    if (helpText !== undefined)
      await writeAudit(tx, actor, workspace.id, {
        action: 'workspace.help_text_updated',
        target,
        details: { answered: kept !== null },
      });
    return {
      ...workspace,
      helpText: kept,
      quietHours: quietHours === undefined ? await findQuietHours(tx, workspace.id) : quietHours,
    };
  });
}
