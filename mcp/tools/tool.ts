import type { z } from 'zod';
import type { Sql } from '../../db/client.js';
import type { Permission } from '../../domain/access.js';
import { type ErrorCode, HeraldError } from '../../domain/errors.js';
import type { DeliverySummaryCache } from '../delivery-summary-cache.js';
import type { toolIcons } from '../icons.js';

/** Who is calling: resolved from the access token, re-checked against Postgres on every call. */
export interface ToolCaller {
  workspaceId: number;
  userId: number;
}

/** What every tool handler may use; wired once by the MCP server factory. */
export interface ToolContext {
  sql: Sql;
  caller: ToolCaller;
  now: () => Date;
  /** Per-process reuse of a workspace's delivery summary (MCP_DELIVERY_SUMMARY_CACHE_TTL). */
  deliverySummaries: DeliverySummaryCache;
}

/**
 * One MCP tool: described zod input and output shapes, the member permissions it needs beyond
 * Developer Tools read (checked live before `run`), and a handler returning the structured
 * result. A handler reports a refusal (wrong id kind, not found) by throwing `ToolRefusal`.
 */
export interface HeraldTool<Input extends z.ZodRawShape, Output extends z.ZodRawShape> {
  name: string;
  title: string;
  /** The subject's icon clients show beside the tool. */
  icon: keyof typeof toolIcons;
  description: string;
  inputSchema: Input;
  outputSchema: Output;
  permissions: readonly Permission[];
  run(
    context: ToolContext,
    input: z.infer<z.ZodObject<Input>>,
  ): Promise<z.infer<z.ZodObject<Output>>>;
}

/** The catalogued codes a tool refuses with: the caller's own to act on, never a server fault. */
export type ToolRefusalCode = Extract<ErrorCode, 'forbidden' | 'not_found' | 'validation_failed'>;

/**
 * A refusal the caller can act on, under its code from the error catalogue (domain/errors.ts);
 * its message is shown to the AI client as the tool error.
 */
export class ToolRefusal extends HeraldError {
  override name = 'ToolRefusal';

  constructor(code: ToolRefusalCode, message: string) {
    super(code, { message });
  }
}

export function defineTool<Input extends z.ZodRawShape, Output extends z.ZodRawShape>(
  tool: HeraldTool<Input, Output>,
): HeraldTool<Input, Output> {
  return tool;
}
