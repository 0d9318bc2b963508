import type { Sql } from '../db/client.js';
import { createMaintenanceActivities } from './maintenance.js';

export interface ActivityDeps {
  sql: Sql;
}

export function createActivities(deps: ActivityDeps) {
  return {
    ...createMaintenanceActivities(deps),
  };
}

export type Activities = ReturnType<typeof createActivities>;
