/**
 * The workspace's opt-out list (Messaging → Opt-outs): search by number, filter by how the
 * recipient opted out, page through, and undo one (the number gets marketing messages again).
 */
import {
  deleteOptOut,
  listOptOuts,
  OPT_OUT_SOURCES,
  type OptOutFilter,
  type OptOutSource,
} from '../../db/opt-outs.js';
import { maskedNumber, numberShown, parseE164 } from '../../domain/phone.js';
import { erasedRecipientForms } from '../../security/recipient-hash.js';
import type { Actor } from '../actor.js';
import { writeAudit } from '../audit.js';
import type { CommandDeps } from '../deps.js';
import { fieldsOf, invalid, notFound } from '../input.js';

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
  const typed = input.search?.replace(/[\s().-]/g, '') ?? '';
  if (typed === '') return filter;
  const number = parseE164(typed) ?? parseE164(`+${typed}`);
  if (number !== undefined)
    return { ...filter, exact: [number, ...erasedRecipientForms(secret, number)] };
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

/**
 * Undoes one opt-out: the number gets the workspace's marketing messages again. The audit line
 * names the number masked, as the log never holds a number.
 */
export async function removeOptOut(
  deps: Pick<CommandDeps, 'sql'>,
  input: { workspaceId: number; id: number },
  actor: Actor,
): Promise<void> {
  await deps.sql.begin(async (tx) => {
    const removed = await deleteOptOut(tx, input.workspaceId, input.id);
    if (!removed)
      throw notFound`This workspace has no opt-out ${input.id}; it may be undone already`;
    await writeAudit(tx, actor, input.workspaceId, {
      action: 'opt_out.removed',
      target: removed.recipient.startsWith('+')
        ? `opt-out ${maskedNumber(removed.recipient)}`
        : 'opt-out of an erased number',
      details: { source: removed.source, opted_out_at: removed.createdAt.toISOString() },
    });
  });
}
