import os from 'node:os';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../server/src/config.ts';

describe('configuration', () => {
  it('has the documented defaults', () => {
    const config = loadConfig({});
    expect(config).toMatchObject({
      port: 3000,
      host: '127.0.0.1',
      baseUrl: 'http://localhost:3000',
      mcpResource: 'http://localhost:3000/mcp',
      databaseUrl: undefined,
      role: 'all',
      accessTokenTtlSecs: 3600,
      refreshTokenTtlSecs: 7_776_000,
      maxUploadBytes: 25 * 1024 * 1024,
      rateLimits: { perToken: 600, perIp: 1200, uploads: 30 },
      fitDecoding: { maxQueuedFiles: 8, maxQueuedBytes: 100 * 1024 * 1024, maxRecords: 1_000_000, timeoutMs: 15_000 },
      requestTimeoutMs: 30_000,
      uploadTimeoutMs: 300_000,
      secureCookies: false,
    });
    expect(config.mcp).toEqual({
      enabled: true,
      readEnabled: true,
      writeEnabled: true,
      asyncEnabled: true,
      executionEnabled: true,
      clientAllowlist: [],
      allowedOrigins: [],
      rateLimitPerMinute: 300,
      authFailuresPerMinute: 60,
      dcrEnabled: true,
      dcrOwnerUserId: undefined,
      dcrOwnerEmail: undefined,
    });
  });

  it('refuses a FIT decode queue smaller than the largest upload, naming both variables', () => {
    expect(() => loadConfig({ PACER_FIT_DECODE_QUEUE_BYTES: '1048576' })).toThrow(ConfigError);
    expect(() => loadConfig({ PACER_FIT_DECODE_QUEUE_BYTES: '1048576' })).toThrow(
      /PACER_FIT_DECODE_QUEUE_BYTES="1048576": must be at least PACER_MAX_UPLOAD_BYTES/,
    );
    expect(
      loadConfig({ PACER_FIT_DECODE_QUEUE_BYTES: '1048576', PACER_MAX_UPLOAD_BYTES: '1048576' }).fitDecoding,
    ).toMatchObject({ maxQueuedBytes: 1_048_576 });
  });

  it('takes PACER_PARTITIONS as 0 (plain tables, the default) or 2 to 256 hash partitions, and refuses any other value', () => {
    expect(loadConfig({}).partitions).toBe(0);
    expect(loadConfig({ PACER_PARTITIONS: '8' }).partitions).toBe(8);
    expect(loadConfig({ PACER_PARTITIONS: '256' }).partitions).toBe(256);
    for (const refused of ['1', '257', '-2', '2.5', 'eight']) {
      expect(() => loadConfig({ PACER_PARTITIONS: refused })).toThrow(new RegExp(`PACER_PARTITIONS="${refused}"`));
    }
  });

  it('takes PACER_FIT_DECODE_WORKERS decoder workers, by default one per CPU but one and at most 2', () => {
    const cpus = os.availableParallelism();
    expect(loadConfig({}).fitDecoding.workers).toBe(Math.min(2, Math.max(1, cpus - 1)));
    expect(loadConfig({ PACER_FIT_DECODE_WORKERS: '3' }).fitDecoding.workers).toBe(3);
    expect(() => loadConfig({ PACER_FIT_DECODE_WORKERS: '0' })).toThrow(/PACER_FIT_DECODE_WORKERS="0"/);
  });

  it('reads every PACER_* value and normalises the base URL', () => {
    const config = loadConfig({
      PACER_PORT: '8080',
      PACER_BASE_URL: 'https://pacer.example.com/',
      PACER_ROLE: 'worker',
      PACER_MCP_WRITE_ENABLED: 'false',
      PACER_MCP_CLIENT_ALLOWLIST: ' a, b ,,c',
      PACER_REFRESH_TOKEN_TTL: '0',
    });
    expect(config.baseUrl).toBe('https://pacer.example.com');
    expect(config.mcpResource).toBe('https://pacer.example.com/mcp');
    expect(config.secureCookies).toBe(true);
    expect(config.role).toBe('worker');
    expect(config.mcp.writeEnabled).toBe(false);
    expect(config.mcp.clientAllowlist).toEqual(['a', 'b', 'c']);
    expect(config.refreshTokenTtlSecs).toBe(0);
  });

  it('is frozen', () => {
    const config = loadConfig({});
    expect(Object.isFrozen(config)).toBe(true);
    expect(Object.isFrozen(config.mcp)).toBe(true);
  });

  it.each([
    ['PACER_PORT', 'eighty'],
    ['PACER_PORT', '70000'],
    ['PACER_ROLE', 'both'],
    ['PACER_BASE_URL', 'ftp://x.example'],
    ['PACER_BASE_URL', 'https://x.example/?a=1'],
    ['PACER_MCP_ENABLED', 'maybe'],
    ['PACER_ACCESS_TOKEN_TTL', '5'],
    ['DATABASE_URL', 'mysql://localhost/db'],
    ['PACER_DATABASE_READ_URL', 'mysql://replica/db'],
    ['PACER_READ_YOUR_WRITES_MS', '-1'],
    ['PACER_READ_MAX_LAG_MS', '10'],
    ['PACER_MCP_DCR_OWNER_EMAIL', 'not-an-email'],
  ])('refuses %s=%s with a message naming the variable', (name, value) => {
    expect(() => loadConfig({ [name]: value })).toThrow(ConfigError);
    expect(() => loadConfig({ [name]: value })).toThrow(`${name}=${JSON.stringify(value)}`);
  });

  it('keeps PACER_CORS_ORIGINS as the Origin headers a browser sends: off by default, exact, deduplicated', () => {
    expect(loadConfig({}).corsOrigins).toEqual([]);
    expect(
      loadConfig({
        PACER_CORS_ORIGINS:
          ' https://App.Example.com , http://127.0.0.1:5173/,https://app.example.com:443, http://localhost:8080',
      }).corsOrigins,
    ).toEqual(['https://app.example.com', 'http://127.0.0.1:5173', 'http://localhost:8080']);
  });

  it.each([
    ['*', '`*` is not accepted'],
    ['https://app.example.com/callback', 'is not an origin'],
    ['https://app.example.com//', 'is not an origin'],
    ['https://app.example.com?x=1', 'is not an origin'],
    ['https://app.example.com#top', 'is not an origin'],
    ['https://user:secret@app.example.com', 'is not an origin'],
    ['app.example.com', 'is not an origin'],
    ['ftp://app.example.com', 'is not an origin'],
    ['https://ok.example.com,null', 'is not an origin'],
  ])('refuses PACER_CORS_ORIGINS=%s at start', (value, message) => {
    expect(() => loadConfig({ PACER_CORS_ORIGINS: value })).toThrow(ConfigError);
    expect(() => loadConfig({ PACER_CORS_ORIGINS: value })).toThrow(message);
    expect(() => loadConfig({ PACER_CORS_ORIGINS: value })).toThrow(`PACER_CORS_ORIGINS=${JSON.stringify(value)}`);
  });

  it('reads from the primary only unless PACER_DATABASE_READ_URL names a replica', () => {
    expect(loadConfig({}).readReplica).toEqual({ url: undefined, readYourWritesMs: 5000, maxLagMs: 2000 });
    expect(
      loadConfig({
        PACER_DATABASE_READ_URL: 'postgres://pacer@replica:5432/pacer',
        PACER_READ_YOUR_WRITES_MS: '8000',
        PACER_READ_MAX_LAG_MS: '500',
      }).readReplica,
    ).toEqual({ url: 'postgres://pacer@replica:5432/pacer', readYourWritesMs: 8000, maxLagMs: 500 });
  });

  it('never prints the replica URL password in a configuration error', () => {
    const read = () => loadConfig({ PACER_DATABASE_READ_URL: 'postgres://pacer:hunter2@replica:99999/pacer' });
    expect(read).toThrow(ConfigError);
    expect(read).toThrow('PACER_DATABASE_READ_URL');
    expect(read).not.toThrow('hunter2');
  });

  it('reads the session URL and the migrate-on-start switch, defaulting to DATABASE_URL and on', () => {
    const defaults = loadConfig({ DATABASE_URL: 'postgres://pacer@pooler:6432/pacer' });
    expect(defaults.databaseSessionUrl).toBeUndefined();
    expect(defaults.migrateOnStart).toBe(true);
    const split = loadConfig({
      DATABASE_URL: 'postgres://pacer@pooler:6432/pacer',
      PACER_DATABASE_SESSION_URL: 'postgres://pacer@db:5432/pacer',
      PACER_MIGRATE_ON_START: 'false',
    });
    expect(split.databaseSessionUrl).toBe('postgres://pacer@db:5432/pacer');
    expect(split.migrateOnStart).toBe(false);
  });

  it('refuses PACER_DATABASE_SESSION_URL without DATABASE_URL, and never prints its password', () => {
    expect(() => loadConfig({ PACER_DATABASE_SESSION_URL: 'postgres://pacer@db:5432/pacer' })).toThrow(
      'PACER_DATABASE_SESSION_URL: needs DATABASE_URL',
    );
    const bad = 'mysql://pacer:hunter2-secret@db/pacer';
    expect(() => loadConfig({ PACER_DATABASE_SESSION_URL: bad })).toThrow('PACER_DATABASE_SESSION_URL=');
    expect(() => loadConfig({ PACER_DATABASE_SESSION_URL: bad })).not.toThrow('hunter2-secret');
  });

  it('treats an empty variable as unset', () => {
    expect(loadConfig({ DATABASE_URL: '', PACER_PORT: '' }).port).toBe(3000);
  });
});
