import { describe, expect, it } from 'vitest';
import { redactSecrets } from '../../security/log-redaction.js';

describe('redactSecrets (issue 24 item 4)', () => {
  it.each([
    [
      '{"req":{"method":"GET","url":"/console/invitations/hli_AbC-12_x"},"msg":"incoming request"}',
      '{"req":{"method":"GET","url":"/console/invitations/[redacted]"},"msg":"incoming request"}',
    ],
    ['{"url":"/o/Ab3dE6gH9k"}', '{"url":"/o/[redacted]"}'],
    [
      'Reply was already sent, did you forget to "return reply" in the "/o/Ab3dE6gH9k" (POST) route?',
      'Reply was already sent, did you forget to "return reply" in the "/o/[redacted]" (POST) route?',
    ],
    [
      '{"url":"/oauth/authorize?client_id=c1&state=s%20cret&code_challenge=abc#frag"}',
      '{"url":"/oauth/authorize?client_id=[redacted]&state=[redacted]&code_challenge=[redacted]#frag"}',
    ],
    [
      'POST https://hooks.example.com/in?token=t0k3n failed: 503',
      'POST https://hooks.example.com/in?token=[redacted] failed: 503',
    ],
    [
      'key hld_a1b2c3d4_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789-_abcdefg refused',
      'key hld_a1b2c3d4_[redacted] refused',
    ],
    ['invited with hli_Zm9vYmFy and more', 'invited with hli_[redacted] and more'],
    // Left alone: paths without secrets, an empty query value, a team invitation's id.
    [
      '{"url":"/console/w/acme/team/invitations/12/revoke?done="}',
      '{"url":"/console/w/acme/team/invitations/12/revoke?done="}',
    ],
    ['{"url":"/api/v1/messages/42"}', '{"url":"/api/v1/messages/42"}'],
  ])('%s', (line, redacted) => {
    expect(redactSecrets(line)).toBe(redacted);
  });
});
