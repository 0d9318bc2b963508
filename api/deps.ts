import type { Client } from '@temporalio/client';
import type { Env } from '../config/env.js';
import type { Sql } from '../db/client.js';

/** What the api needs from the outside world; wired once by the entry point. */
export interface ApiDeps {
  env: Env;
  publicUrl: string;
  secret: string;
  sql: Sql;
  temporal: Client;
}
