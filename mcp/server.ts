import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { FastifyBaseLogger } from 'fastify';
import { accessProblem } from './access.js';
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

/** The one mapping from a failure inside a tool to what the AI client sees. */
export function toolErrorResult(error: unknown, log: FastifyBaseLogger): CallToolResult {
  if (error instanceof ToolRefusal) return toolError(error.message);
  log.error({ err: error }, 'MCP tool failed');
  return toolError(
    'The report could not be produced because of a server error. Try again shortly.',
  );
}

/** An MCP server for one authenticated request: the seven read-only reporting tools. */
export function createMcpServer(context: ToolContext, log: FastifyBaseLogger): McpServer {
  const server = new McpServer(
    { name: 'herald-reporting', title: 'Herald reporting', version: '1.0.0' },
    {
      instructions:
        'Read-only delivery reporting for one Herald workspace: campaigns, Quick Send and API SMS batches, delivery totals and team counts. It cannot send messages or change settings.',
    },
  );
  for (const tool of tools) {
    server.registerTool(
      tool.name,
      {
        title: tool.title,
        description: tool.description,
        inputSchema: tool.inputSchema,
        outputSchema: tool.outputSchema,
        annotations: { title: tool.title, ...READ_ONLY },
      },
      async (input: Record<string, unknown>): Promise<CallToolResult> => {
        const problem = await accessProblem(context.sql, context.caller, tool.permissions);
        if (problem) return toolError(problem);
        try {
          const result = await tool.run(context, input as never);
          return {
            structuredContent: result,
            content: [{ type: 'text', text: JSON.stringify(result) }],
          };
        } catch (error) {
          return toolErrorResult(error, log);
        }
      },
    );
  }
  return server;
}
