/** The sign-in, workspace and consent pages of the authorization flow: plain HTML forms. */

import { escapeHtml, page } from '../../domain/html.js';

const hidden = (requestId: string) =>
  `<input type="hidden" name="request" value="${escapeHtml(requestId)}">`;

export function signInPage(input: { requestId: string; clientName: string; error?: string }) {
  return page(
    'Sign in',
    `<h1>Sign in to Herald</h1>
<p><strong>${escapeHtml(input.clientName)}</strong> wants read-only access to your Herald reports.</p>
${input.error ? `<p class="error" role="alert">${escapeHtml(input.error)}</p>` : ''}
<form method="post" action="sign-in">${hidden(input.requestId)}
<label for="email">Email</label><input id="email" name="email" type="email" autocomplete="username" required>
<label for="password">Password</label><input id="password" name="password" type="password" autocomplete="current-password" required>
<button type="submit">Sign in</button></form>`,
  );
}

export function codePage(input: { requestId: string; error?: string }) {
  return page(
    'Two-step verification',
    `<h1>Two-step verification</h1>
<p>Enter the 6-digit code from your authenticator app.</p>
${input.error ? `<p class="error" role="alert">${escapeHtml(input.error)}</p>` : ''}
<form method="post" action="code">${hidden(input.requestId)}
<label for="code">Verification code</label><input id="code" name="code" type="text" inputmode="numeric" autocomplete="one-time-code" maxlength="7" required>
<button type="submit">Verify</button></form>`,
  );
}

export function workspacePage(input: {
  requestId: string;
  workspaces: { id: number; name: string; slug: string }[];
}) {
  const choices = input.workspaces
    .map(
      (workspace, index) =>
        `<label><input type="radio" name="workspace" value="${workspace.id}"${index === 0 ? ' checked' : ''}> ${escapeHtml(workspace.name)} (${escapeHtml(workspace.slug)})</label>`,
    )
    .join('\n');
  return page(
    'Choose a workspace',
    `<h1>Choose a workspace</h1>
<form method="post" action="workspace">${hidden(input.requestId)}
${choices}
<button type="submit">Continue</button></form>`,
  );
}

export function consentPage(input: {
  requestId: string;
  clientName: string;
  workspaceName: string;
  redirectUri: string;
}) {
  return page(
    'Authorize',
    `<h1>Authorize ${escapeHtml(input.clientName)}</h1>
<p>Read-only reporting in <strong>${escapeHtml(input.workspaceName)}</strong>: campaigns, Quick Send and API SMS delivery counts, and team counts. It cannot send messages, send or verify codes, or change settings, and it never sees message text, phone numbers or codes.</p>
<p>After you decide, you will be sent to:</p>
<p class="box" id="callback">${escapeHtml(input.redirectUri)}</p>
<form method="post" action="consent">${hidden(input.requestId)}
<button type="submit" name="decision" value="approve">Approve</button>
<button type="submit" name="decision" value="deny">Deny</button></form>`,
  );
}

export function messagePage(title: string, text: string) {
  return page(title, `<h1>${escapeHtml(title)}</h1><p>${escapeHtml(text)}</p>`);
}
