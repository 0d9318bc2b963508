/**
 * More services → OTP activity: what became of the workspace's codes over the last 30 days, per
 * day (the conversion chart) and per OTP service and purpose, filterable by either, with the
 * latest 100 requests, numbers masked unless the member has recipients.read.
 */
import type { FastifyInstance } from 'fastify';
import { loadOtpActivity } from '../../commands/otp/activity.js';
import { can } from '../access.js';
import type { ConsoleContext } from '../context.js';
import { OTP_CHART_SERIES, otpConversionChart } from '../otp-chart.js';

export async function otpActivityRoutes(
  app: FastifyInstance,
  { context }: { context: ConsoleContext },
) {
  const { deps } = context;

  app.get<{ Querystring: { service?: string; purpose?: string } }>(
    '/otp-activity',
    { config: { action: 'otp_services.view' } },
    async (request, reply) => {
      const { visitor } = request.member;
      const activity = await loadOtpActivity(deps, {
        workspaceId: visitor.workspaceId,
        fullNumbers: can(visitor, 'otp_activity.numbers'),
        service: request.query.service,
        purpose: request.query.purpose,
      });
      return reply.page('otp-activity', {
        title: 'OTP activity',
        activity,
        chart: otpConversionChart(activity.byDay, activity.days),
        series: OTP_CHART_SERIES,
        percent: (value: number | null) => (value === null ? '–' : `${value}%`),
      });
    },
  );
}
