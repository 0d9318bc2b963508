/**
 * The console's Inbox: recipients' replies of the workspace (db/inbound-messages.ts), newest
 * first, their numbers masked unless the member may read them, and the HELP answer it is set to.
 */
import {
  findWorkspaceHelpText,
  type InboundListItem,
  listInboundMessages,
} from '../../db/inbound-messages.js';
import { numberShown } from '../../domain/phone.js';
import type { CommandDeps } from '../deps.js';

type Deps = Pick<CommandDeps, 'sql'>;

const INBOX_PAGE_SIZE = 50;

export interface InboxPage {
  replies: (Omit<InboundListItem, 'from'> & { number: string })[];
  /** The cursor of the next older page; null on the last. */
  before: number | null;
  helpText: string | null;
}

export async function loadInbox(
  deps: Deps,
  workspaceId: number,
  options: { before: number | null; fullNumbers: boolean },
): Promise<InboxPage> {
  const rows = await listInboundMessages(
    deps.sql,
    workspaceId,
    options.before,
    INBOX_PAGE_SIZE + 1,
  );
  const page = rows.slice(0, INBOX_PAGE_SIZE);
  return {
    replies: page.map(({ from, ...reply }) => ({
      ...reply,
      number: numberShown(from, options.fullNumbers),
    })),
    before: rows.length > INBOX_PAGE_SIZE ? (page.at(-1)?.id ?? null) : null,
    helpText: await findWorkspaceHelpText(deps.sql, workspaceId),
  };
}
