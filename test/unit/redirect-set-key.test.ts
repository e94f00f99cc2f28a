import { describe, expect, it } from 'vitest';
import {
  normalizeRedirectSet,
  normalizeRedirectUri,
  redirectSetKeyOf,
  registrationKeyOf,
} from '../../server/src/modules/oauth/registration.service.ts';

/**
 * The key under which dynamically registered clients are shared
 * (specification §4.2): scheme and host are case-insensitive (RFC 3986
 * §6.2.2.1), loopback ports are chosen per run (RFC 8252 §7.3), paths and
 * queries are case-sensitive.
 */
describe('redirect-set normalization', () => {
  it('ignores the port of an http loopback redirect URI', () => {
    expect(normalizeRedirectUri('http://127.0.0.1:1234/cb')).toBe('http://127.0.0.1/cb');
    expect(redirectSetKeyOf(['http://127.0.0.1:1234/cb'])).toBe(redirectSetKeyOf(['http://127.0.0.1:5678/cb']));
    expect(normalizeRedirectUri('http://[::1]:33418/callback?x=1')).toBe('http://[::1]/callback?x=1');
    expect(normalizeRedirectUri('http://LocalHost:9/cb')).toBe('http://localhost/cb');
  });

  it('keeps the port of a non-loopback or https redirect URI', () => {
    expect(normalizeRedirectUri('https://app.example:8443/cb')).toBe('https://app.example:8443/cb');
    expect(normalizeRedirectUri('https://localhost:8443/cb')).toBe('https://localhost:8443/cb');
    expect(redirectSetKeyOf(['https://app.example:8443/cb'])).not.toBe(
      redirectSetKeyOf(['https://app.example:9443/cb']),
    );
  });

  it('drops a default port, which names the same endpoint', () => {
    expect(normalizeRedirectUri('https://app.example:443/cb')).toBe('https://app.example/cb');
  });

  it('lowercases scheme and host but keeps path and query verbatim', () => {
    expect(normalizeRedirectUri('HTTPS://App.Example/CallBack?State=A')).toBe('https://app.example/CallBack?State=A');
    expect(redirectSetKeyOf(['https://app.example/cb'])).not.toBe(redirectSetKeyOf(['https://app.example/CB']));
  });

  it('does not treat a backslash after the host as part of the host', () => {
    expect(normalizeRedirectUri('https://App.example\\cb')).toBe('https://app.example\\cb');
  });

  it('lowercases the scheme and host of a private-use redirect URI (RFC 8252 §7.1), keeping its path', () => {
    expect(normalizeRedirectUri('Cursor://AnySphere.cursor-mcp/OAuth/Callback')).toBe(
      'cursor://anysphere.cursor-mcp/OAuth/Callback',
    );
    expect(normalizeRedirectUri('COM.Example.App:/CallBack')).toBe('com.example.app:/CallBack');
    expect(normalizeRedirectUri('com.example.app:/cb')).toBe('com.example.app:/cb');
    expect(redirectSetKeyOf(['com.example.app:/cb'])).not.toBe(redirectSetKeyOf(['com.example.app://cb']));
  });

  it("keeps every member of a mixed set such as Cursor's, ignoring only the loopback port", () => {
    expect(
      normalizeRedirectSet([
        'cursor://anysphere.cursor-mcp/oauth/callback',
        'https://www.cursor.com/agents/mcp/oauth/callback',
        'http://127.0.0.1:33418/callback',
      ]),
    ).toEqual([
      'cursor://anysphere.cursor-mcp/oauth/callback',
      'http://127.0.0.1/callback',
      'https://www.cursor.com/agents/mcp/oauth/callback',
    ]);
  });

  it('is the same for the same set in any order and with duplicates', () => {
    const a = ['https://b.example/cb', 'http://127.0.0.1:1000/cb', 'https://a.example/cb'];
    const b = ['https://A.example/cb', 'https://b.example/cb', 'http://127.0.0.1:2000/cb', 'https://a.example/cb'];
    expect(normalizeRedirectSet(b)).toEqual(['http://127.0.0.1/cb', 'https://a.example/cb', 'https://b.example/cb']);
    expect(redirectSetKeyOf(a)).toBe(redirectSetKeyOf(b));
  });

  it('differs for a subset or a superset', () => {
    const pair = ['https://a.example/cb', 'https://b.example/cb'];
    expect(redirectSetKeyOf(pair)).not.toBe(redirectSetKeyOf(['https://a.example/cb']));
    expect(redirectSetKeyOf(pair)).not.toBe(redirectSetKeyOf([...pair, 'https://c.example/cb']));
  });

  it('is a fixed-length hash, so long sets fit a B-tree index entry', () => {
    const long = Array.from({ length: 10 }, (_, i) => `https://app.example/${'x'.repeat(1500)}/${i}`);
    expect(redirectSetKeyOf(long)).toMatch(/^[0-9a-f]{64}$/);
  });
});

/** The key a DCR client is shared under: its redirect-URI set and its name (RFC 8252 §8.6, issue 18). */
describe('registration key', () => {
  const uris = ['http://localhost:33418/oauth/callback'];

  it('is the same for the same name and a set that differs only in loopback port', () => {
    expect(registrationKeyOf({ clientName: 'Claude Code', redirectUris: uris })).toBe(
      registrationKeyOf({ clientName: 'Claude Code', redirectUris: ['http://localhost:5555/oauth/callback'] }),
    );
  });

  it('differs for another name, or the same name in another letter case', () => {
    const key = registrationKeyOf({ clientName: 'Claude Code', redirectUris: uris });
    expect(registrationKeyOf({ clientName: 'Sneaky Notes', redirectUris: uris })).not.toBe(key);
    expect(registrationKeyOf({ clientName: 'claude code', redirectUris: uris })).not.toBe(key);
  });
});
