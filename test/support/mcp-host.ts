/**
 * What an MCP host (a desktop AI client) keeps and runs to connect with OAuth: its storage of
 * the registration, PKCE verifier and tokens, and the loopback callback it listens on.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type {
  OAuthClientProvider,
  OAuthDiscoveryState,
} from '@modelcontextprotocol/sdk/client/auth.js';
import type {
  OAuthClientInformationMixed,
  OAuthClientMetadata,
  OAuthTokens,
} from '@modelcontextprotocol/sdk/shared/auth.js';

export class HostStorage implements OAuthClientProvider {
  information: OAuthClientInformationMixed | undefined;
  savedTokens: OAuthTokens | undefined;
  verifier = '';
  discovery: OAuthDiscoveryState | undefined;
  authorizationUrl: URL | undefined;
  constructor(
    readonly redirectUrl: string,
    private readonly clientName = 'Herald e2e host',
  ) {}

  get clientMetadata(): OAuthClientMetadata {
    return {
      client_name: this.clientName,
      redirect_uris: [this.redirectUrl],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
    };
  }
  clientInformation() {
    return this.information;
  }
  saveClientInformation(information: OAuthClientInformationMixed) {
    this.information = information;
  }
  tokens() {
    return this.savedTokens;
  }
  saveTokens(tokens: OAuthTokens) {
    this.savedTokens = tokens;
  }
  redirectToAuthorization(url: URL) {
    this.authorizationUrl = url;
  }
  saveCodeVerifier(verifier: string) {
    this.verifier = verifier;
  }
  codeVerifier() {
    return this.verifier;
  }
  /** Kept beside the verifier, so the callback leg is bound to the authorization server it began with. */
  saveDiscoveryState(state: OAuthDiscoveryState) {
    this.discovery = state;
  }
  discoveryState() {
    return this.discovery;
  }
  invalidateCredentials(scope: 'all' | 'client' | 'tokens' | 'verifier' | 'discovery') {
    if (scope === 'all' || scope === 'tokens') this.savedTokens = undefined;
    if (scope === 'all' || scope === 'client') this.information = undefined;
    if (scope === 'all' || scope === 'discovery') this.discovery = undefined;
  }
}

export interface CallbackListener {
  server: Server;
  url: string;
  /** The next URL the browser is sent back to. */
  next(): Promise<URL>;
}

/** The loopback callback a native MCP host listens on. */
export async function callbackListener(): Promise<CallbackListener> {
  let deliver: ((url: URL) => void) | undefined;
  const server = createServer((request, response) => {
    response.end('You can close this window.');
    deliver?.(new URL(request.url ?? '/', 'http://127.0.0.1'));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    server,
    url: `http://127.0.0.1:${port}/callback`,
    next: () =>
      new Promise<URL>((resolve) => {
        deliver = resolve;
      }),
  };
}
