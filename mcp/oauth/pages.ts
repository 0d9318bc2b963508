/**
 * The sign-in, two-step code, workspace and consent pages of the authorization flow, in the
 * console's style. Plain HTML forms: they work without scripts or external assets.
 */
import { readFileSync } from 'node:fs';
import { escapeHtml } from '../../domain/html.js';

/**
 * The console's stylesheet, read as a file (mcp never imports console code) and inlined: these
 * pages are served with the console off too, under a CSP that allows inline styles and no 'self'.
 */
const CONSOLE_CSS = readFileSync(
  new URL('../../console/assets/console.css', import.meta.url),
  'utf8',
);

/** What only these pages need on top of the console's anonymous-page card. */
const FLOW_CSS = `
.auth .card{max-width:30rem;margin:0}
.auth h2{font-size:1rem;margin:1.25rem 0 .5rem}
.facts{display:grid;grid-template-columns:max-content minmax(0,1fr);gap:.35rem .9rem;margin:0}
.facts dt{color:var(--muted);font-weight:600;font-size:.88rem}
.facts dd{margin:0;overflow-wrap:anywhere}
.scope{margin:0 0 .5rem;padding-left:1.25rem}
.scope li{margin:.15rem 0}
.box{font-family:var(--mono);font-size:.9rem;background:var(--bg);border:1px solid var(--line);border-radius:6px;padding:.6rem .75rem;margin:0 0 .5rem;overflow-wrap:anywhere}
.box.remote{background:var(--warn-soft);border-color:#f3d9a4;font-weight:600}
.alert.warn{margin-bottom:.75rem}
.choices label{font-weight:400;display:flex;align-items:center;gap:.5rem;min-height:44px;padding:.25rem .5rem;border:1px solid var(--line);border-radius:6px;margin-bottom:.5rem}
.auth button[type=submit]{min-height:44px}
.decision{display:grid;gap:.5rem;margin-top:1rem}
.decision button[type=submit]{margin-top:0}
button:focus-visible{outline:3px solid #1b3bb5;outline-offset:2px}
@media (max-width:480px){.auth{padding:.75rem}.auth .card{padding:1.25rem}.facts{grid-template-columns:minmax(0,1fr);gap:0}.facts dd{margin-bottom:.5rem}}
`;

/** A page of the flow: the console's centred card with Herald's mark. */
function flowPage(title: string, body: string): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)} · Herald</title>
<style>${CONSOLE_CSS}${FLOW_CSS}</style></head>
<body class="auth"><main class="card">
<div class="brand"><span class="brand-mark" aria-hidden="true"></span>Herald</div>
${body}
</main></body></html>`;
}

const hidden = (requestId: string) =>
  `<input type="hidden" name="request" value="${escapeHtml(requestId)}">`;

const problem = (error?: string) =>
  error ? `<p class="alert error" role="alert">${escapeHtml(error)}</p>` : '';

/** The client's name as it is always shown: in quotes, as what it calls itself. */
const selfDeclared = (name: string) => `<strong>“${escapeHtml(name)}”</strong>`;

export function signInPage(input: { requestId: string; clientName: string; error?: string }) {
  return flowPage(
    'Sign in',
    `<h1>Sign in to Herald</h1>
<p class="muted">A client calling itself ${selfDeclared(input.clientName)} (a name it chose itself) wants read-only access to your Herald reports.</p>
${problem(input.error)}
<form method="post" action="sign-in">${hidden(input.requestId)}
<div class="field"><label for="email">Email</label><input id="email" name="email" type="email" autocomplete="username" required autofocus></div>
<div class="field"><label for="password">Password</label><input id="password" name="password" type="password" autocomplete="current-password" required></div>
<button type="submit">Sign in</button></form>`,
  );
}

export function codePage(input: { requestId: string; error?: string }) {
  return flowPage(
    'Two-step verification',
    `<h1>Two-step verification</h1>
<p class="muted">Enter the 6-digit code from your authenticator app.</p>
${problem(input.error)}
<form method="post" action="code">${hidden(input.requestId)}
<div class="field"><label for="code">Verification code</label><input id="code" name="code" type="text" inputmode="numeric" autocomplete="one-time-code" maxlength="7" required autofocus></div>
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
        `<label><input type="radio" name="workspace" value="${workspace.id}"${index === 0 ? ' checked' : ''}> <span>${escapeHtml(workspace.name)} (<span class="mono">${escapeHtml(workspace.slug)}</span>)</span></label>`,
    )
    .join('\n');
  return flowPage(
    'Choose a workspace',
    `<h1>Choose a workspace</h1>
<p class="muted">The client will read reports of this workspace only.</p>
<form method="post" action="workspace">${hidden(input.requestId)}
<fieldset class="choices"><legend class="sr-only">Workspace</legend>
${choices}
</fieldset>
<button type="submit">Continue</button></form>`,
  );
}

/** `2026-11-23 14:05 UTC`, the console's one form of a time. */
const minuteUtc = (at: Date) => `${at.toISOString().slice(0, 16).replace('T', ' ')} UTC`;

const plural = (count: number, unit: string) => `${count} ${unit}${count === 1 ? '' : 's'}`;

/** How long before `now`, in the largest whole unit: "3 minutes ago". */
export function timeAgo(at: Date, now: Date): string {
  const seconds = Math.floor((now.getTime() - at.getTime()) / 1000);
  if (seconds < 60) return 'less than a minute ago';
  const minutes = Math.floor(seconds / 60);
  if (minutes < 60) return `${plural(minutes, 'minute')} ago`;
  const hours = Math.floor(minutes / 60);
  if (hours < 48) return `${plural(hours, 'hour')} ago`;
  return `${plural(Math.floor(hours / 24), 'day')} ago`;
}

/** The client's own website: an https address it gave, something else it gave, or none. */
export type ClientWebsite = { kind: 'https'; uri: string } | { kind: 'other' } | { kind: 'none' };

function website(site: ClientWebsite): string {
  switch (site.kind) {
    case 'https':
      // Text, never a link: the address is the client's claim, and a click would leave the flow.
      return `<span class="mono">${escapeHtml(site.uri)}</span> (given by the client; Herald has not verified it)`;
    case 'other':
      return 'None Herald shows: what it gave is not an https address.';
    case 'none':
      return 'No website given.';
  }
}

export interface ConsentFacts {
  requestId: string;
  client: { name: string; website: ClientWebsite; registeredAt: Date };
  workspace: { name: string; slug: string };
  userEmail: string;
  redirectUri: string;
  /** The callback is on the user's own machine (RFC 8252 loopback). */
  callbackIsLoopback: boolean;
  now: Date;
}

export function consentPage(facts: ConsentFacts) {
  const { client } = facts;
  const note = facts.callbackIsLoopback
    ? '<p class="muted" id="callback-note">An address on this computer (loopback): the client runs on your machine.</p>'
    : '<p class="alert warn" id="callback-note">This address is not on your computer: the client receives your access there. Approve only if you recognise it.</p>';
  return flowPage(
    'Authorize',
    `<h1>Authorize ${escapeHtml(client.name)}</h1>
<p class="muted">A client asks for read-only access to Herald reports.</p>
<h2>The client</h2>
<dl class="facts">
<dt>Name</dt><dd>Calls itself ${selfDeclared(client.name)}, a name it chose itself; Herald has not verified it.</dd>
<dt>Website</dt><dd>${website(client.website)}</dd>
<dt>Registered</dt><dd><time datetime="${client.registeredAt.toISOString()}">${minuteUtc(client.registeredAt)}</time> (${timeAgo(client.registeredAt, facts.now)})</dd>
</dl>
<h2>Access to</h2>
<dl class="facts">
<dt>Workspace</dt><dd><strong>${escapeHtml(facts.workspace.name)}</strong> (<span class="mono">${escapeHtml(facts.workspace.slug)}</span>)</dd>
<dt>Signed in as</dt><dd><strong>${escapeHtml(facts.userEmail)}</strong></dd>
</dl>
<h2>It can</h2>
<ul class="scope"><li>Read reports: delivery counts of campaigns, Quick Sends and API sends, and team counts.</li></ul>
<h2>It cannot</h2>
<ul class="scope"><li>Send messages, send or verify codes, or change settings.</li><li>See message text, phone numbers or codes.</li></ul>
<h2>After you decide</h2>
<p>Your browser is sent back to the client at:</p>
<p class="${facts.callbackIsLoopback ? 'box' : 'box remote'}" id="callback">${escapeHtml(facts.redirectUri)}</p>
${note}
<form method="post" action="consent" class="decision">${hidden(facts.requestId)}
<button type="submit" name="decision" value="approve">Approve</button>
<button type="submit" name="decision" value="deny" class="secondary">Deny</button></form>`,
  );
}

export function messagePage(title: string, text: string) {
  return flowPage(title, `<h1>${escapeHtml(title)}</h1><p>${escapeHtml(text)}</p>`);
}
