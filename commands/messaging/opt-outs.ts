/**
 * The workspace's opt-out list (Messaging → Opt-outs, `herald opt-out`): search by number, filter
 * by how the recipient opted out, page through, and undo one (the number gets marketing messages
 * again).
 */
import type { TransactionSql } from '../../db/client.js';
import {
  deleteOptOut,
  listOptOuts,
  OPT_OUT_SOURCES,
  type OptOutFilter,
  type OptOutRow,
  type OptOutSource,
} from '../../db/opt-outs.js';
import type { Workspace } from '../../db/workspaces.js';
import { maskedNumber, numberShown, parseE164 } from '../../domain/phone.js';
import { erasedRecipientForms } from '../../security/recipient-hash.js';
import type { Actor } from '../actor.js';
import { writeAudit } from '../audit.js';
import type { CommandDeps } from '../deps.js';
import { fieldsOf, invalid, notFound, requiredText } from '../input.js';
import { findWorkspace } from '../team/workspaces.js';

const PAGE_SIZE = 50;
const MIN_SEARCH_DIGITS = 3;

export interface OptOutsInput {
  /** A full number (+61412555011), or with recipients.read also part of one (555011). */
  search?: string;
  source?: string;
  /** Continues after this row id (the previous page's `nextBefore`). */
  before?: number;
}

const field = fieldsOf<OptOutsInput>();

export interface OptOutListing {
  rows: { id: number; number: string; erased: boolean; source: OptOutSource; createdAt: Date }[];
  nextBefore: number | null;
}

export function isOptOutSource(value: string): value is OptOutSource {
  return (OPT_OUT_SOURCES as readonly string[]).includes(value);
}

/** A number as typed, without the spaces, brackets, dots and dashes people write it with. */
const compactNumber = (typed: string) => typed.replace(/[\s().-]/g, '');

/** A typed number in E.164, its `+` optional; undefined when it is not a whole valid number. */
const fullNumberOf = (typed: string) => {
  const compact = compactNumber(typed);
  return compact === '' ? undefined : (parseE164(compact) ?? parseE164(`+${compact}`));
};

/** How an opt-out of the number may be stored: as it is, or erased (its keyed-hash forms). */
const storedFormsOf = (secret: string, number: string) => [
  number,
  ...erasedRecipientForms(secret, number),
];

/**
 * What to match. A full number matches it and its erased forms. Part of a number is searched only
 * for a member who sees numbers in full: for one who sees them masked, a search by parts would
 * uncover the hidden digits one guess at a time, while a full number tells them nothing they
 * did not type (the results stay masked).
 */
function filterOf(
  secret: string,
  input: OptOutsInput,
  fullNumbers: boolean,
): OptOutFilter | undefined {
  const filter: OptOutFilter = {};
  if (input.source !== undefined && input.source !== '') {
    if (!isOptOutSource(input.source))
      throw invalid`${field('source')} must be one of ${OPT_OUT_SOURCES.join(', ')}`;
    filter.source = input.source;
  }
  const typed = compactNumber(input.search ?? '');
  if (typed === '') return filter;
  const number = fullNumberOf(typed);
  if (number !== undefined) return { ...filter, exact: storedFormsOf(secret, number) };
  if (!fullNumbers)
    throw invalid`${field('search')}: search by the full number in international form, such as +61412555011`;
  const digits = typed.replace(/^\+/, '');
  if (!/^\d+$/.test(digits) || digits.length < MIN_SEARCH_DIGITS)
    throw invalid`${field('search')}: type at least ${MIN_SEARCH_DIGITS} digits of the number`;
  return { ...filter, digits };
}

/** One page of the workspace's opt-outs, newest first; numbers masked unless `fullNumbers`. */
export async function listWorkspaceOptOuts(
  deps: Pick<CommandDeps, 'sql' | 'secret'>,
  workspaceId: number,
  input: OptOutsInput & { fullNumbers: boolean },
): Promise<OptOutListing> {
  const filter = filterOf(deps.secret, input, input.fullNumbers);
  const found = await listOptOuts(deps.sql, workspaceId, filter ?? {}, {
    limit: PAGE_SIZE + 1,
    ...(input.before !== undefined && { beforeId: input.before }),
  });
  const page = found.slice(0, PAGE_SIZE);
  return {
    rows: page.map((row) => ({
      id: row.id,
      erased: !row.recipient.startsWith('+'),
      number: row.recipient.startsWith('+')
        ? numberShown(row.recipient, input.fullNumbers)
        : 'Erased number',
      source: row.source,
      createdAt: row.createdAt,
    })),
    nextBefore: found.length > PAGE_SIZE ? (page.at(-1)?.id ?? null) : null,
  };
}

/** Deletes one opt-out and writes its audit line in `tx`; refused when there is none. */
async function undoOptOut(
  tx: TransactionSql,
  workspaceId: number,
  id: number,
  actor: Actor,
): Promise<OptOutRow> {
  const removed = await deleteOptOut(tx, workspaceId, id);
  if (!removed) throw notFound`This workspace has no opt-out ${id}; it may be undone already`;
  await writeAudit(tx, actor, workspaceId, {
    action: 'opt_out.removed',
    target: removed.recipient.startsWith('+')
      ? `opt-out ${maskedNumber(removed.recipient)}`
      : 'opt-out of an erased number',
    details: { source: removed.source, opted_out_at: removed.createdAt.toISOString() },
  });
  return removed;
}

/**
 * Undoes one opt-out: the number gets the workspace's marketing messages again. The audit line
 * names the number masked, as the log never holds a number.
 */
export async function removeOptOut(
  deps: Pick<CommandDeps, 'sql'>,
  input: { workspaceId: number; id: number },
  actor: Actor,
): Promise<void> {
  await deps.sql.begin((tx) => undoOptOut(tx, input.workspaceId, input.id, actor));
}

export interface NumberOptOutInput {
  workspace?: string;
  /** The whole number in international form (+61412555011; the `+` may be left out). */
  number?: string;
}

const numberField = fieldsOf<NumberOptOutInput>();

export interface RemovedNumberOptOut {
  workspace: Workspace;
  /** The number in E.164. */
  number: string;
  /** Its opt-outs undone: one, or two when it opted out again after it was erased. */
  removed: OptOutRow[];
}

/**
 * Undoes a number's opt-out by the number (`herald opt-out remove`): every row the list shows
 * for it, as removeOptOut undoes and audits each, in one transaction, so the number gets the
 * workspace's marketing messages again.
 */
export async function removeNumberOptOut(
  deps: Pick<CommandDeps, 'sql' | 'secret'>,
  input: NumberOptOutInput,
  actor: Actor,
): Promise<RemovedNumberOptOut> {
  const workspace = await findWorkspace(deps, input.workspace);
  const typed = requiredText(input.number, numberField('number'));
  const number = fullNumberOf(typed);
  if (number === undefined)
    throw invalid`${numberField('number')} must be a whole number in international form, such as +61412555011`;
  const forms = storedFormsOf(deps.secret, number);
  const found = await listOptOuts(
    deps.sql,
    workspace.id,
    { exact: forms },
    { limit: forms.length },
  );
  if (found.length === 0)
    throw notFound`${numberField('number')} ${number} has not opted out of ${workspace.slug}`;
  const removed = await deps.sql.begin(async (tx) => {
    const undone: OptOutRow[] = [];
    for (const row of found) undone.push(await undoOptOut(tx, workspace.id, row.id, actor));
    return undone;
  });
  return { workspace, number, removed };
}
