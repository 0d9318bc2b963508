import type { Client } from '@temporalio/client';
import type { Env } from '../config/env.js';
import type { Sql } from '../db/client.js';
import type { SavedCampaignForFirstTry } from '../domain/first-try.js';
import type { ProviderDefinition } from '../domain/provider-definition.js';

/** What the use-cases need from the outside world; wired once by each entry point. */
export interface CommandDeps {
  env: Env;
  publicUrl: string;
  secret: string;
  sql: Sql;
  temporal: Client;
  /** Every provider type (providers/registry.ts PROVIDER_DEFINITIONS), handed in by the entry point. */
  providerTypes: readonly ProviderDefinition[];
  /**
   * With a worker in this process (`herald start`): a small campaign's first try, started the
   * moment it is saved, beside its start (activities/first-try.ts). Absent elsewhere.
   */
  firstTry?: (campaign: SavedCampaignForFirstTry) => void;
}
