/** Message templates a workspace's OTP services and sends may name by slug. */
import {
  type DependentOtpService,
  deleteMessageTemplate,
  findTemplateListing,
  listMessageTemplates,
  otpServicesUsingTemplate,
  type TemplateListing,
  updateMessageTemplate,
} from '../../db/message-templates.js';
import { insertMessageTemplate } from '../../db/otp-settings.js';
import type { Workspace } from '../../db/workspaces.js';
import { otpTemplateProblem } from '../../domain/otp.js';
import {
  MAX_MESSAGE_LENGTH,
  MESSAGE_PURPOSES,
  type MessagePurpose,
} from '../../domain/send-request.js';
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
  resourceSlug,
} from '../input.js';
import { capitalised, dependents } from '../otp/dependents.js';
import { findWorkspace } from '../team/workspaces.js';

export type { DependentOtpService, TemplateListing };

type Deps = Pick<CommandDeps, 'sql'>;

/*
 * Each change takes its `actor` and writes its audit line in the change's transaction
 * (commands/audit.ts).
 */

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

/** On update, what is not given (or blank) keeps its value; the slug never changes. */
export type UpdateTemplateInput = CreateTemplateInput;

const field = fieldsOf<CreateTemplateInput>();

function checkedBody(body: string): string {
  if (characters(body) > MAX_MESSAGE_LENGTH)
    throw invalid`${field('body')} must be at most ${MAX_MESSAGE_LENGTH} characters`;
  return body;
}

function checkedName(name: string): string {
  if (characters(name) > MAX_NAME_LENGTH)
    throw invalid`${field('name')} must be at most ${MAX_NAME_LENGTH} characters`;
  return name;
}

function checkedPurpose(purpose: string): MessagePurpose {
  if (!(MESSAGE_PURPOSES as readonly string[]).includes(purpose))
    throw invalid`${field('purpose')} must be one of ${MESSAGE_PURPOSES.join(', ')}`;
  return purpose as MessagePurpose;
}

function templateSlug(slug: string | undefined): string {
  return resourceSlug(requiredText(slug, field('slug')), field('slug'));
}

export async function createTemplate(
  deps: Deps,
  input: CreateTemplateInput,
  actor: Actor,
): Promise<{ id: number; slug: string; purpose: string; workspace: Workspace }> {
  const workspace = await findWorkspace(deps, input.workspace);
  // Every rule is checked, so a form shows all its refusals at once.
  const checks = refuseAll();
  const slug = checks.check(() => templateSlug(input.slug));
  const body = checks.check(() => checkedBody(requiredText(input.body, field('body'))));
  const name = checks.check(() => checkedName(optionalText(input.name) ?? slug ?? ''));
  const purpose = checks.check(() =>
    checkedPurpose(optionalText(input.purpose) ?? 'transactional'),
  );
  checks.done();
  if (!slug || body === undefined || name === undefined || !purpose)
    throw new Error('refused above');
  try {
    const id = await deps.sql.begin(async (tx) => {
      const { id } = await insertMessageTemplate(tx, {
        workspaceId: workspace.id,
        slug,
        name,
        body,
        purpose,
        enabled: input.enabled !== false,
      });
      await writeAudit(tx, actor, workspace.id, {
        action: 'template.created',
        target: `Template ${slug}`,
        details: { purpose },
      });
      return id;
    });
    return { id, slug, purpose, workspace };
  } catch (error) {
    if (isUniqueViolation(error))
      throw conflict`${field('slug')}: ${workspace.slug} already has a template "${slug}"`;
    throw error;
  }
}

/** The workspace's templates, by slug. */
export async function listTemplates(
  deps: Deps,
  input: { workspace?: string },
): Promise<TemplateListing[]> {
  const workspace = await findWorkspace(deps, input.workspace);
  return listMessageTemplates(deps.sql, workspace.id);
}

export async function showTemplate(
  deps: Deps,
  input: { workspace?: string; slug?: string },
): Promise<{ template: TemplateListing; workspace: Workspace }> {
  const workspace = await findWorkspace(deps, input.workspace);
  const slug = templateSlug(input.slug);
  const template = await findTemplateListing(deps.sql, workspace.id, slug);
  if (!template) throw notFound`${field('slug')} "${slug}" is not a template of ${workspace.slug}`;
  return { template, workspace };
}

/**
 * Changes what is given. An OTP service that names the template keeps working: the template
 * stays enabled and transactional and its body fits each such service's code length. The
 * template is locked while its services are checked, so none can be saved with it meanwhile.
 */
export async function updateTemplate(
  deps: Deps,
  input: UpdateTemplateInput,
  actor: Actor,
): Promise<{ template: TemplateListing; workspace: Workspace }> {
  const workspace = await findWorkspace(deps, input.workspace);
  const slug = templateSlug(input.slug);
  const unknown = () => notFound`${field('slug')} "${slug}" is not a template of ${workspace.slug}`;
  const template = await deps.sql.begin(async (tx) => {
    const current = await findTemplateListing(tx, workspace.id, slug, 'update');
    if (!current) throw unknown();
    const givenBody = optionalText(input.body);
    const givenPurpose = optionalText(input.purpose);
    const givenName = optionalText(input.name);
    if ([givenBody, givenPurpose, givenName, input.enabled].every((value) => value === undefined))
      throw invalid`Give at least one of ${listOf([field('name'), field('body'), field('purpose'), field('enabled')])}`;
    // Every rule is checked, so a form shows all its refusals at once.
    const checks = refuseAll();
    const name = checks.check(() =>
      givenName === undefined ? current.name : checkedName(givenName),
    );
    const body = checks.check(() =>
      givenBody === undefined ? current.body : checkedBody(givenBody),
    );
    const purpose = checks.check(() =>
      givenPurpose === undefined ? current.purpose : checkedPurpose(givenPurpose),
    );
    checks.done();
    if (name === undefined || body === undefined || purpose === undefined)
      throw new Error('refused above');
    const settings = { name, body, purpose, enabled: input.enabled ?? current.enabled };
    const services = await otpServicesUsingTemplate(tx, workspace.id, slug);
    if (services.length > 0) {
      const { who, sends, them } = dependents(services);
      if (!settings.enabled)
        throw conflict`${field('enabled')}: ${who} ${sends} with this template; change ${them} first`;
      if (settings.purpose !== 'transactional')
        throw conflict`${field('purpose')}: ${who} ${sends} with this template, which must stay transactional`;
      for (const service of services) {
        const problem = otpTemplateProblem(settings.body, service.codeLength);
        if (problem)
          throw invalid`${field('body')}: the OTP service "${service.name}" sends with this template, which ${problem}`;
      }
    }
    const template = await updateMessageTemplate(tx, workspace.id, slug, settings);
    if (template)
      await writeAudit(tx, actor, workspace.id, {
        action: 'template.updated',
        target: `Template ${template.slug}`,
        details: { purpose: template.purpose, enabled: template.enabled },
      });
    return template;
  });
  if (!template) throw unknown();
  return { template, workspace };
}

/**
 * Refused while an OTP service names the template: its sends would all be refused. The
 * template is locked while its services are checked, so none can be saved with it meanwhile.
 */
export async function deleteTemplate(
  deps: Deps,
  input: { workspace?: string; slug?: string },
  actor: Actor,
): Promise<{ slug: string; workspace: Workspace }> {
  const workspace = await findWorkspace(deps, input.workspace);
  const slug = templateSlug(input.slug);
  await deps.sql.begin(async (tx) => {
    const unknown = () =>
      notFound`${field('slug')} "${slug}" is not a template of ${workspace.slug}`;
    if (!(await findTemplateListing(tx, workspace.id, slug, 'update'))) throw unknown();
    const services = await otpServicesUsingTemplate(tx, workspace.id, slug);
    if (services.length > 0) {
      const { who, sends, them } = dependents(services);
      throw conflict`${capitalised(who)} ${sends} with the template "${slug}"; change ${them} first`;
    }
    if (!(await deleteMessageTemplate(tx, workspace.id, slug))) throw unknown();
    await writeAudit(tx, actor, workspace.id, {
      action: 'template.deleted',
      target: `Template ${slug}`,
      details: {},
    });
  });
  return { slug, workspace };
}
