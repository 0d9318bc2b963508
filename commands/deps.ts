import type { Client } from '@temporalio/client';
import type { Env } from '../config/env.js';
import type { Sql, TransactionSql } from '../db/client.js';
import type { OtpFirstTry } from '../domain/first-try.js';
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
  firstTries?: FirstTries;
}

/** First tries beside the start, by a worker of the same process (activities/first-try.ts). */
export interface FirstTries {
  /** A try for a send about to be saved, when one may be made (small, due now, a slot free). */
  reserve(send: { messages: number; scheduledAt: Date | null }): FirstTry | undefined;
  /** Submits the code of an OTP request just saved, before its run starts; settles when done or after `waitMs`. */
  code(request: OtpFirstTry, waitMs: number): Promise<void>;
}

/** One reserved first try: `hold` in the save's transaction, then `begin` or `cancel`. */
export interface FirstTry {
  /** Holds the campaign's first chunk for the try (its submission lease), in `tx`. */
  hold(tx: TransactionSql, campaignId: number): Promise<void>;
  /** Once saved: submits its messages; settles when it ended or had its head start. */
  begin(messages: number): Promise<void>;
  /** Not saved: lets the reservation go. */
  cancel(): void;
}
