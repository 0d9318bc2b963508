import type { Client } from '@temporalio/client';
import type { Env } from '../config/env.js';
import type { Sql } from '../db/client.js';
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
}
