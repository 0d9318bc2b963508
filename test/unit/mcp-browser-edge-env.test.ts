import { describe, expect, it } from 'vitest';
import { parseEnv } from '../../config/env.js';

describe('MCP_CORS_ORIGINS and MCP_ALLOWED_HOSTS', () => {
  it('default to any origin and no alias', () => {
    const env = parseEnv({});
    expect(env.MCP_CORS_ORIGINS).toEqual(['*']);
    expect(env.MCP_ALLOWED_HOSTS).toEqual([]);
  });

  it('read origins as origins and host names in lower case', () => {
    const env = parseEnv({
      MCP_CORS_ORIGINS: 'https://App.example:443/, http://localhost:6274',
      MCP_ALLOWED_HOSTS: 'MCP.example, [::1]',
    });
    expect(env.MCP_CORS_ORIGINS).toEqual(['https://app.example', 'http://localhost:6274']);
    expect(env.MCP_ALLOWED_HOSTS).toEqual(['mcp.example', '[::1]']);
  });

  it.each([
    ['MCP_CORS_ORIGINS', 'https://app.example/path', 'must be * or a list of origins'],
    ['MCP_CORS_ORIGINS', 'app.example', 'must be * or a list of origins'],
    ['MCP_CORS_ORIGINS', '*, https://app.example', 'must be * alone or a list of origins'],
    ['MCP_ALLOWED_HOSTS', 'https://mcp.example', 'must be a comma-separated list of host names'],
    ['MCP_ALLOWED_HOSTS', 'mcp.example:443', 'must be a comma-separated list of host names'],
  ])('refuses %s=%s', (name, value, message) => {
    expect(() => parseEnv({ [name]: value })).toThrow(
      `Invalid environment:\n  ${name}: ${message}`,
    );
  });
});
