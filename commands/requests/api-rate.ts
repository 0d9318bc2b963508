/**
 * API rate limits: a token bucket per API key and one per workspace, held in Postgres so every
 * api replica draws on the same buckets (db/fraud-guard.ts takeRateTokens). Exact to the token: a
 * request's take is one atomic statement on locked rows, timed by Postgres's clock. The answer
 * carries the IETF HTTPAPI draft's `RateLimit-Policy` and `RateLimit` fields.
 */
import type { Sql } from '../../db/client.js';
import { type BucketTake, takeRateTokens } from '../../db/fraud-guard.js';
import type { HeraldError } from '../../domain/errors.js';
import { effectiveGuard, type GuardOverrides, type RequestRate } from '../../domain/fraud-guard.js';
import { countRefusal, tooManyRequests } from '../fraud-guard/send-checks.js';

export interface ApiRateOutcome {
  /** Set on every answer while a limit applies. */
  headers: Record<string, string>;
  refusal?: HeraldError;
}

interface Bucket {
  name: 'key' | 'workspace';
  key: string;
  rate: RequestRate;
}

/** The buckets a key's request draws on: its own (or its workspace's key rate) and its workspace's. */
function bucketsOf(
  keyId: number,
  workspaceId: number,
  keyRate: RequestRate | 'off' | null,
  settings: GuardOverrides | null,
): Bucket[] {
  const guard = effectiveGuard(settings ?? {});
  const own = keyRate ?? guard.keyRate;
  return [
    ...(own === 'off' ? [] : [{ name: 'key' as const, key: `key:${keyId}`, rate: own }]),
    ...(guard.workspaceRate === 'off'
      ? []
      : [
          {
            name: 'workspace' as const,
            key: `workspace:${workspaceId}`,
            rate: guard.workspaceRate,
          },
        ]),
  ];
}

const perSecond = (rate: RequestRate) => rate.requests / rate.perSeconds;

function fields(buckets: Bucket[], takes: BucketTake[]): Record<string, string> {
  const policy: string[] = [];
  const state: string[] = [];
  for (const bucket of buckets) {
    const take = takes.find((candidate) => candidate.key === bucket.key);
    if (!take) continue;
    policy.push(`"${bucket.name}";q=${bucket.rate.requests};w=${bucket.rate.perSeconds}`);
    const remaining = Math.max(0, Math.floor(take.tokens));
    const untilFull = Math.ceil((take.capacity - take.tokens) / take.rate);
    state.push(`"${bucket.name}";r=${remaining};t=${Math.max(0, untilFull)}`);
  }
  return { 'ratelimit-policy': policy.join(', '), ratelimit: state.join(', ') };
}

/** Takes a request's tokens; a refusal when the key's or the workspace's bucket is empty. */
export async function takeApiRequest(
  sql: Sql,
  request: {
    keyId: number;
    workspaceId: number;
    keyRate: RequestRate | 'off' | null;
    settings: GuardOverrides | null;
  },
): Promise<ApiRateOutcome> {
  const buckets = bucketsOf(request.keyId, request.workspaceId, request.keyRate, request.settings);
  if (buckets.length === 0) return { headers: {} };
  const takes = await takeRateTokens(
    sql,
    buckets.map((bucket) => ({
      key: bucket.key,
      capacity: bucket.rate.requests,
      perSecond: perSecond(bucket.rate),
    })),
  );
  const headers = fields(buckets, takes);
  if (takes.every((take) => take.allowed)) return { headers };
  const empty = buckets.filter((bucket) =>
    takes.some((take) => take.key === bucket.key && take.tokens < 1),
  );
  const wait = Math.max(
    ...takes.filter((take) => take.tokens < 1).map((take) => (1 - take.tokens) / take.rate),
  );
  const limiting = empty[0]?.name ?? 'key';
  countRefusal(sql, request.workspaceId, limiting === 'key' ? 'key_rate' : 'workspace_rate');
  const whose = limiting === 'key' ? 'this API key' : 'this workspace';
  return {
    headers,
    refusal: tooManyRequests(
      `The rate limit of ${whose} is reached. Retry after ${Math.max(1, Math.ceil(wait))} seconds.`,
      wait,
    ),
  };
}
