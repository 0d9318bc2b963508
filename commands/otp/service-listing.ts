/** The workspace's OTP services as the console lists them. */
import { listOtpServices } from '../../db/otp-service-listing.js';
import type { OtpServiceRecord } from '../../db/otp-settings.js';
import type { CommandDeps } from '../deps.js';
import { findWorkspace } from '../team/workspaces.js';

export type { OtpServiceRecord };

export async function listWorkspaceOtpServices(
  deps: Pick<CommandDeps, 'sql'>,
  input: { workspace?: string },
): Promise<OtpServiceRecord[]> {
  const workspace = await findWorkspace(deps, input.workspace);
  return listOtpServices(deps.sql, workspace.id);
}
