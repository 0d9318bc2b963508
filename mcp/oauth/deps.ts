import type { Sql } from '../../db/client.js';
import type { OAuthUrls } from './metadata.js';
import type { RedirectPolicy } from './redirect-uris.js';

export interface OAuthDeps {
  sql: Sql;
  /** HERALD_SECRET: keys the hashes of codes, tokens, client secrets and browser bindings. */
  secret: string;
  urls: OAuthUrls;
  redirectPolicy: RedirectPolicy;
}

/** Lifetimes in seconds. Access tokens are short; refresh tokens rotate on every use. */
export const LIFETIMES = {
  authorizationRequest: 10 * 60,
  code: 60,
  accessToken: 15 * 60,
  refreshToken: 30 * 24 * 60 * 60,
  /** A rotated refresh token presented again within this window is a concurrent refresh. */
  refreshReuseGrace: 30,
} as const;
