import type { ConsoleVisitor, PausedRanges } from '../commands/console/sessions.js';
import { type Action, can } from './access.js';

export interface NavItem {
  label: string;
  href: string;
  current: boolean;
}

export interface Navigation {
  sections: { title: string; items: NavItem[] }[];
  workspace: { slug: string; name: string };
  email: string;
  role: string;
  /** The banner while the fraud guard blocks ranges; the link only for who may open the page. */
  paused: PausedRanges & { href: string | null };
}

/** The sidebar: only what the member may open, the current page marked. */
export function navigationFor(visitor: ConsoleVisitor, currentPath: string): Navigation {
  const base = `/console/w/${visitor.workspaceSlug}`;
  /** `within`: further paths whose pages belong to the item (a batch's report, under Campaigns). */
  const item = (label: string, path: string, action: Action, within: string[] = []): NavItem[] =>
    can(visitor, action)
      ? [
          {
            label,
            href: `${base}${path}`,
            current:
              currentPath === `${base}${path}` ||
              [path, ...within].some(
                (prefix) => prefix !== '' && currentPath.startsWith(`${base}${prefix}/`),
              ),
          },
        ]
      : [];
  const sections = [
    {
      title: 'Messaging',
      items: [
        ...item('Dashboard', '', 'dashboard.view'),
        ...item('Quick Send', '/quick-send', 'quick_send.send'),
        ...item('Campaigns', '/campaigns', 'batches.view', ['/batches']),
        ...item('Inbox', '/inbox', 'inbox.view'),
        ...item('Opt-outs', '/opt-outs', 'opt_outs.view'),
      ],
    },
    {
      title: 'Developer Tools',
      items: [
        ...item('API keys', '/developer/api-keys', 'api_keys.view'),
        ...item('MCP & AI', '/developer/mcp', 'mcp_connections.view'),
        ...item('Webhooks', '/developer/webhooks', 'webhooks.view'),
      ],
    },
    {
      title: 'More services',
      items: [
        ...item('OTP', '/otp-services', 'otp_services.view'),
        ...item('OTP activity', '/otp-activity', 'otp_services.view'),
        ...item('Templates', '/otp-templates', 'otp_services.view'),
        ...item('Sender ids', '/otp-senders', 'otp_services.view'),
      ],
    },
    {
      title: 'Workspace',
      items: [
        ...item('Team', '/team', 'team.view'),
        ...item('Providers', '/providers', 'providers.view'),
        ...item('Failover routes', '/failover-routes', 'providers.view'),
        ...item('Fraud guard', '/fraud-guard', 'fraud_guard.view'),
        ...item('Audit log', '/audit', 'audit.view'),
        ...item('Settings', '/settings', 'settings.manage'),
      ],
    },
  ].filter((section) => section.items.length > 0);
  return {
    sections,
    workspace: { slug: visitor.workspaceSlug, name: visitor.workspaceName },
    email: visitor.email,
    role: visitor.role ?? 'none',
    paused: {
      ...visitor.pausedRanges,
      href: can(visitor, 'fraud_guard.view') ? `${base}/fraud-guard` : null,
    },
  };
}
