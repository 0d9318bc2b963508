/**
 * herald opt-out list|remove: the console's Messaging → Opt-outs for the operator, who sees
 * numbers in full. Options in, the same use-cases, output.
 */
import {
  listWorkspaceOptOuts,
  type OptOutListing,
  removeNumberOptOut,
} from '../../commands/messaging/opt-outs.js';
import { findWorkspace } from '../../commands/team/workspaces.js';
import { OPT_OUT_SOURCES } from '../../db/opt-outs.js';
import type { AdminContext } from '../context.js';
import { listing, tableTime } from '../output.js';
import { type CommandResult, type Options, optionOf, run, text } from './options.js';
import { type AdminCommand, optional, required } from './table.js';

type OptOutListed = OptOutListing['rows'][number];

/** The use-case searches `search`; the command's option for it is `--number`. */
const listLabel = (field: string) => (field === 'search' ? '--number' : optionOf(field));

const presentOptOut = (optOut: OptOutListed) => ({
  id: optOut.id,
  // An erased number is kept only as a keyed hash: there is no number to print.
  number: optOut.erased ? null : optOut.number,
  erased: optOut.erased,
  source: optOut.source,
  created_at: optOut.createdAt.toISOString(),
});

/**
 * herald opt-out list --workspace <slug> [--number <digits|+E.164>] [--source <source>]
 * → {"opt_outs": [...]}, newest first: every page of the use-case's, numbers in full.
 */
export async function optOutList(context: AdminContext, options: Options): Promise<CommandResult> {
  const workspace = await run(findWorkspace(context, text(options, 'workspace')));
  const optOuts: OptOutListed[] = [];
  let before: number | undefined;
  do {
    const page = await run(
      listWorkspaceOptOuts(context, workspace.id, {
        search: text(options, 'number'),
        source: text(options, 'source'),
        ...(before !== undefined && { before }),
        fullNumbers: true,
      }),
      listLabel,
    );
    optOuts.push(...page.rows);
    before = page.nextBefore ?? undefined;
  } while (before !== undefined);
  const filtered = text(options, 'number') || text(options, 'source');
  return {
    json: { opt_outs: optOuts.map(presentOptOut) },
    human: listing(
      optOuts,
      ['ID', 'NUMBER', 'SOURCE', 'OPTED OUT (UTC)'],
      (optOut) => [optOut.id, optOut.number, optOut.source, tableTime(optOut.createdAt)],
      filtered
        ? `${workspace.slug} has no opt-outs that match`
        : `${workspace.slug} has no opt-outs`,
    ),
  };
}

/**
 * herald opt-out remove --workspace <slug> --number <E.164> → {"workspace", "number", "removed"}:
 * the number gets the workspace's marketing messages again; audited as `opt_out.removed`.
 */
export async function optOutRemove(
  context: AdminContext,
  options: Options,
): Promise<CommandResult> {
  const { workspace, number, removed } = await run(
    removeNumberOptOut(
      context,
      { workspace: text(options, 'workspace'), number: text(options, 'number') },
      context.actor,
    ),
  );
  const how = removed
    .map((row) => `${row.source}, opted out ${tableTime(row.createdAt)} UTC`)
    .join('; ');
  return {
    json: {
      workspace: workspace.slug,
      number,
      removed: removed.map((row) => ({
        id: row.id,
        erased: !row.recipient.startsWith('+'),
        source: row.source,
        created_at: row.createdAt.toISOString(),
      })),
    },
    human: `Removed the opt-out of ${number} from ${workspace.slug} (${how}): it gets marketing messages again`,
  };
}

const WORKSPACE = required('workspace', '<slug>');

export const OPT_OUT_COMMANDS: AdminCommand[] = [
  {
    name: 'opt-out list',
    run: optOutList,
    synopses: [
      [
        [
          WORKSPACE,
          optional('number', '<digits|+E.164>'),
          optional('source', OPT_OUT_SOURCES.join('|')),
        ],
      ],
    ],
  },
  {
    name: 'opt-out remove',
    run: optOutRemove,
    synopses: [[[WORKSPACE, required('number', '<E.164>')]]],
  },
];
