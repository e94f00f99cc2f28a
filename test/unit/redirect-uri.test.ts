import { describe, expect, it } from 'vitest';
import {
  KNOWN_MCP_HOST_SCHEMES,
  isAllowedPrivateUseScheme,
  matchRedirectUri,
  redirectTargetLabel,
  redirectUriProblem,
} from '../../server/src/modules/oauth/redirect-uri.ts';

/**
 * Which redirect URIs a client may register (RFC 6749 §3.1.2, RFC 8252 §7):
 * https, http on loopback (§7.3), and private-use schemes in reverse-domain
 * form (§7.1, §8.4) or of a known MCP host; never a scheme that runs script,
 * reads local data or leaves the browser for another protocol.
 */
describe('private-use redirect schemes (RFC 8252 §7.1, §8.4)', () => {
  it.each(['com.example.app', 'com.example.app-beta', 'io.github.someone.tool', 'net.a1.b+c'])(
    'accepts the reverse-domain scheme %s',
    (scheme) => {
      expect(isAllowedPrivateUseScheme(scheme)).toBe(true);
    },
  );

  it('accepts the known MCP host schemes, which have no period', () => {
    expect([...KNOWN_MCP_HOST_SCHEMES].sort()).toEqual(
      ['claude', 'cursor', 'vscode', 'vscode-insiders', 'windsurf', 'zed'].sort(),
    );
    for (const scheme of KNOWN_MCP_HOST_SCHEMES) expect(isAllowedPrivateUseScheme(scheme)).toBe(true);
  });

  it.each(['foo', 'myapp', 'intent', 'android-app', 'chrome-extension'])(
    'refuses %s: no period and not a known MCP host',
    (scheme) => {
      expect(isAllowedPrivateUseScheme(scheme)).toBe(false);
    },
  );

  it.each([
    'javascript',
    'vbscript',
    'data',
    'blob',
    'file',
    'about',
    'ftp',
    'ws',
    'wss',
    'mailto',
    'tel',
    'http',
    'https',
  ])('never treats %s as a private-use scheme', (scheme) => {
    expect(isAllowedPrivateUseScheme(scheme)).toBe(false);
  });
});

describe('redirectUriProblem (RFC 6749 §3.1.2, RFC 8252 §7)', () => {
  it.each([
    'https://app.example/cb',
    'https://claude.ai/api/mcp/auth_callback',
    'https://chatgpt.com/connector_platform_oauth_redirect',
    'https://www.cursor.com/agents/mcp/oauth/callback',
    'http://127.0.0.1:33418/callback',
    'http://[::1]:8080/cb',
    'http://localhost/cb',
    'cursor://anysphere.cursor-mcp/oauth/callback',
    'Cursor://anysphere.cursor-mcp/oauth/callback',
    'vscode://vscode.github-authentication/did-authenticate?windowId=1',
    'com.example.app:/oauth2redirect/example-provider',
    'com.example.app://oauth2redirect',
  ])('accepts %s', (uri) => {
    expect(redirectUriProblem(uri)).toBeUndefined();
  });

  it.each([
    ['javascript:alert(1)', /javascript: scheme/],
    ['JavaScript:alert(1)', /javascript: scheme/],
    ['data:text/html,hi', /data: scheme/],
    ['file:///x', /file: scheme/],
    ['blob:https://app.example/0000', /blob: scheme/],
    ['about:blank', /about: scheme/],
    ['vbscript:msgbox(1)', /vbscript: scheme/],
    ['ftp://files.example/cb', /ftp: scheme/],
    ['wss://app.example/cb', /wss: scheme/],
    ['mailto:someone@example.com', /mailto: scheme/],
    ['tel:+15551234', /tel: scheme/],
    ['http://evil.example/cb', /must use https/],
    ['http://app.example/cb', /must use https/],
    ['https://app.example/cb#frag', /fragment/],
    ['foo://x', /reverse-domain form/],
    ['myapp:/callback', /reverse-domain form/],
    ['com..example:/cb', /reverse-domain form/],
    ['cursor://anysphere.cursor-mcp/oauth/callback#x', /fragment/],
    ['/callback', /absolute/],
    ['not a uri', /absolute/],
  ])('refuses %s', (uri, problem) => {
    expect(redirectUriProblem(uri)).toMatch(problem);
  });
});

describe('matchRedirectUri for private-use schemes', () => {
  const registered = ['cursor://anysphere.cursor-mcp/oauth/callback', 'com.example.app:/cb'];

  it('matches the exact registered string only', () => {
    expect(matchRedirectUri(registered, 'cursor://anysphere.cursor-mcp/oauth/callback')).toBe(
      'cursor://anysphere.cursor-mcp/oauth/callback',
    );
    expect(matchRedirectUri(registered, 'com.example.app:/cb')).toBe('com.example.app:/cb');
    expect(matchRedirectUri(registered, 'cursor://anysphere.cursor-mcp/oauth/callback/')).toBeUndefined();
    expect(matchRedirectUri(registered, 'cursor://anysphere.cursor-mcp:9/oauth/callback')).toBeUndefined();
    expect(matchRedirectUri(registered, 'com.example.app://cb')).toBeUndefined();
  });
});

describe('redirectTargetLabel (what the consent page says the user returns to)', () => {
  it('is the host of a web redirect', () => {
    expect(redirectTargetLabel('https://claude.ai/api/mcp/auth_callback')).toBe('claude.ai');
    expect(redirectTargetLabel('http://127.0.0.1:33418/callback')).toBe('127.0.0.1:33418');
  });

  it('is the scheme and authority of an app redirect, or the scheme alone without an authority', () => {
    expect(redirectTargetLabel('cursor://anysphere.cursor-mcp/oauth/callback')).toBe('cursor://anysphere.cursor-mcp');
    expect(redirectTargetLabel('com.example.app:/callback')).toBe('com.example.app:');
  });
});
