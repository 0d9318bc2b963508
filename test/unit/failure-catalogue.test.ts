/**
 * One catalogue of failures (domain/errors.ts): the activity failure types with their
 * retryability, the retry policies workflows derive from it, and the MCP tool-error mapper.
 */
import { ApplicationFailure } from '@temporalio/common';
import type { FastifyBaseLogger } from 'fastify';
import { describe, expect, it } from 'vitest';
import { DatabaseUnavailableError } from '../../db/client.js';
import {
  ACTIVITY_FAILURES,
  activityFailure,
  HeraldError,
  NON_RETRYABLE_ACTIVITY_FAILURES,
} from '../../domain/errors.js';
import { toolErrorResult } from '../../mcp/server.js';
import { ToolRefusal } from '../../mcp/tools/tool.js';
import { retryUnlessPermanent } from '../../workflows/retry-policies.js';

describe('activity failures', () => {
  it('are retryable exactly as the catalogue states', () => {
    expect(
      Object.keys(ACTIVITY_FAILURES).map((type) => {
        const failure = activityFailure(type as keyof typeof ACTIVITY_FAILURES, 'why');
        expect(failure).toBeInstanceOf(ApplicationFailure);
        return [failure.type, failure.message, failure.nonRetryable];
      }),
    ).toEqual([
      ['CampaignNotFound', 'why', true],
      ['LookupUnanswered', 'why', false],
      ['SubmissionLeaseLost', 'why', false],
      ['CampaignIncomplete', 'why', false],
    ]);
  });

  it('give every workflow retry policy its non-retryable types', () => {
    expect(NON_RETRYABLE_ACTIVITY_FAILURES).toEqual(['CampaignNotFound']);
    expect(retryUnlessPermanent({ initialInterval: '1 second', maximumAttempts: 3 })).toEqual({
      initialInterval: '1 second',
      maximumAttempts: 3,
      nonRetryableErrorTypes: ['CampaignNotFound'],
    });
  });
});

describe('MCP tool errors', () => {
  function recordingLog() {
    const lines: [level: string, message: string][] = [];
    const at = (level: string) => (_object: unknown, message: string) => {
      lines.push([level, message]);
    };
    return { lines, log: { warn: at('warn'), error: at('error') } as unknown as FastifyBaseLogger };
  }

  const text = (error: unknown, log: FastifyBaseLogger) => {
    const result = toolErrorResult(error, log);
    expect(result.isError).toBe(true);
    return result.content;
  };

  it('show a refusal as it is, under its catalogued code, and log nothing', () => {
    const { lines, log } = recordingLog();
    const refusal = new ToolRefusal('not_found', 'No campaign 7 in this workspace.');
    expect(refusal).toBeInstanceOf(HeraldError);
    expect([refusal.code, refusal.status, refusal.name]).toEqual(['not_found', 404, 'ToolRefusal']);
    expect(text(refusal, log)).toEqual([
      { type: 'text', text: 'No campaign 7 in this workspace.' },
    ]);
    expect(text(new HeraldError('forbidden', { message: 'Insufficient access.' }), log)).toEqual([
      { type: 'text', text: 'Insufficient access.' },
    ]);
    expect(lines).toEqual([]);
  });

  it('show only the catalogue message when Postgres is away', () => {
    const { lines, log } = recordingLog();
    expect(text(new DatabaseUnavailableError(), log)).toEqual([
      {
        type: 'text',
        text: 'Service temporarily unavailable. The report could not be produced; try again shortly.',
      },
    ]);
    expect(lines).toEqual([['warn', 'MCP tool: service unavailable']]);
  });

  it('never show internals of a server fault', () => {
    const { lines, log } = recordingLog();
    expect(
      text(new TypeError("Cannot read properties of undefined (reading 'sent')"), log),
    ).toEqual([
      { type: 'text', text: 'Server error. The report could not be produced; try again shortly.' },
    ]);
    expect(text(new HeraldError('internal', { message: 'column x missing' }), log)).toEqual([
      { type: 'text', text: 'Server error. The report could not be produced; try again shortly.' },
    ]);
    expect(lines).toEqual([
      ['error', 'MCP tool failed'],
      ['error', 'MCP tool failed'],
    ]);
  });
});
