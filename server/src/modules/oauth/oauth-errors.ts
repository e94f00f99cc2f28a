/**
 * An OAuth 2.0 protocol error (RFC 6749 §4.1.2.1, §5.2; RFC 7009; RFC 7662;
 * RFC 8707 §2 `invalid_target`). These answer `{error, error_description}`
 * (or travel on the redirect), never a problem document.
 */
export class OAuthProtocolError extends Error {
  override readonly name = 'OAuthProtocolError';
  readonly error: string;
  readonly status: number;

  constructor(error: string, description: string, status = 400) {
    super(description);
    this.error = error;
    this.status = status;
  }

  toResponseObject(): { error: string; error_description: string } {
    return { error: this.error, error_description: this.message };
  }
}

/**
 * An authorization request whose client or redirect URI cannot be trusted:
 * RFC 6749 §4.1.2.1 forbids redirecting, so the user sees an error page.
 */
export class UntrustedAuthorizationRequestError extends Error {
  override readonly name = 'UntrustedAuthorizationRequestError';
}
