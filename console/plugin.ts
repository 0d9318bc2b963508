/**
 * The web console: server-rendered pages under /console (and `/` redirecting there). Composed
 * beside the REST api and MCP by the server module; it calls commands/ only.
 */
import fastifyCookie from '@fastify/cookie';
import fastifyFormbody from '@fastify/formbody';
import type { FastifyInstance } from 'fastify';
import { totpEnrolled } from '../commands/team/totp.js';
import { HeraldError } from '../domain/errors.js';
import { assetRoutes } from './assets.js';
import type { ConsoleContext } from './context.js';
import type { ConsoleDeps } from './deps.js';
import { installDoors } from './doors.js';
import { createGuard } from './guard.js';
import { messagePage } from './pages.js';
import { accountRoutes } from './routes/account.js';
import { apiKeyRoutes } from './routes/api-keys.js';
import { auditRoutes } from './routes/audit.js';
import { batchRoutes } from './routes/batches.js';
import { campaignRoutes } from './routes/campaigns.js';
import { dashboardRoutes } from './routes/dashboard.js';
import { failoverRouteRoutes } from './routes/failover-routes.js';
import { fraudGuardRoutes } from './routes/fraud-guard.js';
import { inboxRoutes } from './routes/inbox.js';
import { invitationRoutes } from './routes/invitations.js';
import { mcpConnectionRoutes } from './routes/mcp-connections.js';
import { memberPermissionRoutes } from './routes/member-permissions.js';
import { optOutRoutes } from './routes/opt-outs.js';
import { otpActivityRoutes } from './routes/otp-activity.js';
import { otpSenderRoutes } from './routes/otp-senders.js';
import { otpServiceRoutes } from './routes/otp-services.js';
import { otpTemplateRoutes } from './routes/otp-templates.js';
import { passwordRoutes } from './routes/passwords.js';
import { providerRoutes } from './routes/providers.js';
import { quickSendRoutes } from './routes/quick-send.js';
import { secondFactorRoutes } from './routes/second-factor.js';
import { teamRoutes } from './routes/team.js';
import { webhookRoutes } from './routes/webhooks.js';
import { workspaceSettingsRoutes } from './routes/workspace-settings.js';

export async function consoleRoutes(app: FastifyInstance, { deps }: { deps: ConsoleDeps }) {
  app.get('/', async (_request, reply) => reply.redirect('/console', 302));
  await app.register(consolePages, { prefix: '/console', deps });
}

async function consolePages(app: FastifyInstance, { deps }: { deps: ConsoleDeps }) {
  await app.register(fastifyFormbody);
  await app.register(fastifyCookie);
  const cookies = { secure: deps.publicUrl.startsWith('https:') };
  const context: ConsoleContext = {
    deps,
    cookies,
    secondFactor: { enrolled: (userId) => totpEnrolled(deps, userId) },
  };
  installDoors(app, createGuard(deps, cookies));

  // Refusals of the console's own input are pages; outages and bugs go to the app's handler
  // (503 with Retry-After, or a 500 that carries no internals).
  app.setErrorHandler((error, _request, reply) => {
    const status =
      error instanceof HeraldError
        ? error.status
        : ((error as { statusCode?: number }).statusCode ?? 500);
    if (status >= 500) throw error;
    return messagePage(reply, status, {
      title: status === 404 ? 'Not found' : 'Request not accepted',
      text: error instanceof HeraldError ? error.message : 'The request could not be read.',
      links: [{ label: 'Open the console', href: '/console' }],
    });
  });
  app.setNotFoundHandler((_request, reply) =>
    messagePage(reply, 404, {
      title: 'Page not found',
      text: 'There is no console page at this address.',
      links: [{ label: 'Open the console', href: '/console' }],
    }),
  );

  await app.register(assetRoutes);
  await app.register(accountRoutes, { context });
  await app.register(invitationRoutes, { context });
  await app.register(secondFactorRoutes, { context });
  await app.register(passwordRoutes, { context });
  await app.register(
    async (workspace) => {
      await workspace.register(dashboardRoutes, { context });
      await workspace.register(apiKeyRoutes, { context });
      await workspace.register(mcpConnectionRoutes, { context });
      await workspace.register(quickSendRoutes, { context });
      await workspace.register(batchRoutes, { context });
      await workspace.register(campaignRoutes, { context });
      await workspace.register(inboxRoutes, { context });
      await workspace.register(auditRoutes, { context });
      await workspace.register(teamRoutes, { context });
      await workspace.register(memberPermissionRoutes, { context });
      await workspace.register(otpServiceRoutes, { context });
      await workspace.register(otpActivityRoutes, { context });
      await workspace.register(otpTemplateRoutes, { context });
      await workspace.register(otpSenderRoutes, { context });
      await workspace.register(webhookRoutes, { context });
      await workspace.register(optOutRoutes, { context });
      await workspace.register(providerRoutes, { context });
      await workspace.register(failoverRouteRoutes, { context });
      await workspace.register(fraudGuardRoutes, { context });
      await workspace.register(workspaceSettingsRoutes, { context });
    },
    { prefix: '/w/:workspace' },
  );
}
