/** Message templates a workspace's OTP services and sends may name by slug. */
import { insertMessageTemplate } from '../db/otp-settings.js';
import type { Workspace } from '../db/workspaces.js';
import { MAX_MESSAGE_LENGTH, MESSAGE_PURPOSES } from '../domain/send-request.js';
import { characters } from '../domain/validation.js';
import type { CommandDeps } from './deps.js';
import {
  conflict,
  fieldsOf,
  invalid,
  isUniqueViolation,
  optionalText,
  requiredText,
  resourceSlug,
} from './input.js';
import { findWorkspace } from './workspaces.js';

const MAX_NAME_LENGTH = 200;

export interface CreateTemplateInput {
  workspace?: string;
  slug?: string;
  body?: string;
  /** The slug when not given. */
  name?: string;
  /** `transactional` when not given; only a transactional template can carry OTP codes. */
  purpose?: string;
  /** Enabled unless false. */
  enabled?: boolean;
}

export async function createTemplate(
  deps: Pick<CommandDeps, 'sql'>,
  input: CreateTemplateInput,
): Promise<{ id: number; slug: string; purpose: string; workspace: Workspace }> {
  const field = fieldsOf<CreateTemplateInput>();
  const workspace = await findWorkspace(deps, input.workspace);
  const slug = resourceSlug(requiredText(input.slug, field('slug')), field('slug'));
  const body = requiredText(input.body, field('body'));
  if (characters(body) > MAX_MESSAGE_LENGTH)
    throw invalid`${field('body')} must be at most ${MAX_MESSAGE_LENGTH} characters`;
  const name = optionalText(input.name) ?? slug;
  if (characters(name) > MAX_NAME_LENGTH)
    throw invalid`${field('name')} must be at most ${MAX_NAME_LENGTH} characters`;
  const purpose = optionalText(input.purpose) ?? 'transactional';
  if (!(MESSAGE_PURPOSES as readonly string[]).includes(purpose))
    throw invalid`${field('purpose')} must be one of ${MESSAGE_PURPOSES.join(', ')}`;
  try {
    const { id } = await insertMessageTemplate(deps.sql, {
      workspaceId: workspace.id,
      slug,
      name,
      body,
      purpose: purpose as (typeof MESSAGE_PURPOSES)[number],
      enabled: input.enabled !== false,
    });
    return { id, slug, purpose, workspace };
  } catch (error) {
    if (isUniqueViolation(error))
      throw conflict`${field('slug')}: ${workspace.slug} already has a template "${slug}"`;
    throw error;
  }
}
