import { canonicalResource } from './resource.js';

/** The URLs of the authorization server and the MCP resource, derived from PUBLIC_URL. */
export interface OAuthUrls {
  issuer: string;
  resource: string;
  resourceMetadata: string;
}

export const MCP_SCOPE = 'mcp:use';

export function oauthUrls(publicUrl: string): OAuthUrls {
  // PUBLIC_URL is an origin (config/env.ts): canonical, it is what resource indicators compare with.
  const issuer = canonicalResource(publicUrl) ?? publicUrl.replace(/\/+$/, '');
  return {
    issuer,
    resource: `${issuer}/mcp`,
    resourceMetadata: `${issuer}/.well-known/oauth-protected-resource/mcp`,
  };
}

/** RFC 9728 Protected Resource Metadata for `/mcp`. */
export function protectedResourceMetadata(urls: OAuthUrls) {
  return {
    resource: urls.resource,
    resource_name: 'Herald reporting (read-only)',
    authorization_servers: [urls.issuer],
    scopes_supported: [MCP_SCOPE],
    bearer_methods_supported: ['header'],
  };
}

/**
 * RFC 8414 Authorization Server Metadata. Public clients with PKCE S256; `client_secret_post`
 * is accepted from hosted clients that register with it. No Client ID Metadata Documents.
 */
export function authorizationServerMetadata(urls: OAuthUrls) {
  return {
    issuer: urls.issuer,
    authorization_endpoint: `${urls.issuer}/oauth/authorize`,
    token_endpoint: `${urls.issuer}/oauth/token`,
    registration_endpoint: `${urls.issuer}/oauth/register`,
    revocation_endpoint: `${urls.issuer}/oauth/revoke`,
    scopes_supported: [MCP_SCOPE],
    response_types_supported: ['code'],
    response_modes_supported: ['query'],
    grant_types_supported: ['authorization_code', 'refresh_token'],
    code_challenge_methods_supported: ['S256'],
    token_endpoint_auth_methods_supported: ['none', 'client_secret_post'],
    revocation_endpoint_auth_methods_supported: ['none', 'client_secret_post'],
    authorization_response_iss_parameter_supported: true,
    client_id_metadata_document_supported: false,
  };
}
