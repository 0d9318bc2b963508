/** An OAuth error response (RFC 6749 §5.2, RFC 7591 §3.2.2, RFC 6750 §3.1), sent as JSON. */
export class OAuthError extends Error {
  override name = 'OAuthError';
  constructor(
    readonly error: string,
    readonly description: string,
    readonly status = 400,
    readonly headers: Record<string, string> = {},
  ) {
    super(description);
  }

  body() {
    return { error: this.error, error_description: this.description };
  }
}
