import type { Sql } from '../db/client.js';
import { createCampaignActivities } from './campaign.js';
import { createMaintenanceActivities } from './maintenance.js';

export interface ActivityDeps {
  sql: Sql;
  /** The operator's `own` provider. */
  ownProviderUrl: string;
  /** Base of the delivery-receipt webhooks handed to providers. */
  publicUrl: string;
}

export function createActivities(deps: ActivityDeps) {
  return {
    ...createCampaignActivities(deps),
    ...createMaintenanceActivities(deps),
  };
}

export type Activities = ReturnType<typeof createActivities>;
