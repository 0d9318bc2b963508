import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { sendOtp } from '../../commands/otp/send-otp.js';
import { verifyOtp } from '../../commands/otp/verify-otp.js';
import { otpSendRequestSchema, otpVerifyRequestSchema } from '../../domain/otp.js';
import type { ApiDeps } from '../deps.js';
import { parseIdempotencyKey, replyIdempotently } from '../idempotency-header.js';
import { principalOf } from '../plugins/auth.js';
import { deadlineOf } from '../request-deadline.js';
import {
  authErrorResponses,
  idempotencyConflictResponse,
  idempotencyKeyHeaderSchema,
  sendLimitedResponse,
} from '../schemas/common.js';
import {
  insufficientCreditsResponse,
  otpSendRefusedResponse,
  otpSendResponseSchema,
  otpVerifyRefusedResponse,
  otpVerifyResponseSchema,
} from '../schemas/otp.js';

export const otpRoutes: FastifyPluginAsyncZod<{ deps: ApiDeps }> = async (app, { deps }) => {
  app.post(
    '/otp/send',
    {
      config: { ability: 'otp:send' },
      schema: {
        summary: 'Send a one-time passcode by SMS',
        tags: ['OTP'],
        headers: idempotencyKeyHeaderSchema,
        body: otpSendRequestSchema,
        response: {
          202: otpSendResponseSchema,
          ...authErrorResponses,
          402: insufficientCreditsResponse,
          409: idempotencyConflictResponse,
          422: otpSendRefusedResponse,
          429: sendLimitedResponse(
            "the recipient's send limit, a paused number range or the workspace's daily cap is reached",
            'Too many codes were sent to this recipient. Try again in 30 seconds.',
          ),
        },
      },
    },
    async (request, reply) => {
      const key = parseIdempotencyKey(request.headers['idempotency-key']);
      return replyIdempotently(
        reply,
        await sendOtp(
          deps,
          principalOf(request),
          { request: request.body, received: request.receivedBody },
          key,
          deadlineOf(request),
        ),
      );
    },
  );

  app.post(
    '/otp/verify',
    {
      config: { ability: 'otp:verify' },
      schema: {
        summary: 'Verify a one-time passcode',
        tags: ['OTP'],
        body: otpVerifyRequestSchema,
        response: {
          200: otpVerifyResponseSchema,
          ...authErrorResponses,
          422: otpVerifyRefusedResponse,
        },
      },
    },
    async (request) => {
      await verifyOtp(deps, principalOf(request), request.body);
      return { message: 'The code is verified.' };
    },
  );
};
