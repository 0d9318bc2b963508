import { type CallToolResult, McpServer } from '@modelcontextprotocol/server';
import type { FastifyBaseLogger } from 'fastify';
import { isDatabaseUnavailable } from '../db/client.js';
import { ERROR_CATALOGUE, HeraldError } from '../domain/errors.js';
import { inSpan } from '../telemetry/tracing.js';
import { accessProblem } from './access.js';
import { serverIcons, toolIcons } from './icons.js';
import { convertedOnce } from './tool-schemas.js';
import { tools } from './tools/index.js';
import { type ToolContext, ToolRefusal } from './tools/tool.js';

const READ_ONLY = {
  readOnlyHint: true,
  destructiveHint: false,
  idempotentHint: true,
  openWorldHint: false,
} as const;

function toolError(message: string): CallToolResult {
  return { isError: true, content: [{ type: 'text', text: message }] };
}

/**
 * The one mapping from a failure inside a tool to what the AI client sees, by the error catalogue
 * (domain/errors.ts), as the api's error handler reads it: a refusal (a 4xx code) is shown as it
 * is; Postgres away is service_unavailable, anything else internal, and those show only the
 * catalogue's public message, never internals.
 */
export function toolErrorResult(error: unknown, log: FastifyBaseLogger): CallToolResult {
  if (error instanceof HeraldError && error.status < 500) return toolError(error.message);
  const unavailable =
    isDatabaseUnavailable(error) ||
    (error instanceof HeraldError && error.code === 'service_unavailable');
  if (unavailable) log.warn({ reason: (error as Error).message }, 'MCP tool: service unavailable');
  else log.error({ err: error }, 'MCP tool failed');
  const { message } = ERROR_CATALOGUE[unavailable ? 'service_unavailable' : 'internal'];
  return toolError(`${message} The report could not be produced; try again shortly.`);
}

/** Each tool's input and output schemas, converted to JSON Schema once per process. */
const registrations = tools.map((tool) => ({
  tool,
  inputSchema: convertedOnce(tool.inputSchema),
  outputSchema: convertedOnce(tool.outputSchema),
}));

/** How long a client may reuse `server/discover` and `tools/list` (2026-07-28 `ttlMs`): both change only with a release. */
const TOOL_LIST_TTL_MS = 3_600_000;

/**
 * An MCP server for one authenticated request, in either protocol era: the read-only reporting
 * tools of docs/spec.md §4.5.
 */
export function createMcpServer(context: ToolContext, log: FastifyBaseLogger): McpServer {
  const server = new McpServer(
    {
      name: 'herald-reporting',
      title: 'Herald reporting',
      version: '1.0.0',
      description:
        'Read-only delivery reporting for one Herald workspace: campaigns (named batches), Quick Sends and API sends, delivery totals and team counts.',
      icons: serverIcons,
    },
    {
      instructions:
        'Read-only delivery reporting for one Herald workspace: campaigns (named batches), Quick Sends and API sends, delivery totals and team counts. It cannot send messages or change settings.',
      // The same for every caller of every workspace: a shared cache may keep them.
      cacheHints: {
        'server/discover': { ttlMs: TOOL_LIST_TTL_MS, cacheScope: 'public' },
        'tools/list': { ttlMs: TOOL_LIST_TTL_MS, cacheScope: 'public' },
      },
    },
  );
  for (const { tool, inputSchema, outputSchema } of registrations) {
    server.registerTool(
      tool.name,
      {
        title: tool.title,
        description: tool.description,
        icons: toolIcons[tool.icon],
        inputSchema,
        outputSchema,
        annotations: { title: tool.title, ...READ_ONLY },
      },
      // A span per tool call (docs/operations.md, "Tracing"), child of the /mcp request's: its name only.
      (input: unknown): Promise<CallToolResult> =>
        inSpan(`mcp.tool ${tool.name}`, { 'mcp.tool.name': tool.name }, async (span) => {
          const problem = await accessProblem(context.sql, context.caller, tool.permissions);
          if (problem) return toolErrorResult(new ToolRefusal('forbidden', problem), log);
          try {
            const result = await tool.run(context, input as never);
            return {
              structuredContent: result,
              content: [{ type: 'text', text: JSON.stringify(result) }],
            };
          } catch (error) {
            span.setAttribute('mcp.tool.error', true);
            return toolErrorResult(error, log);
          }
        }),
    );
  }
  return server;
}
