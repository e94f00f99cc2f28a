import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sha256Hex } from '../../server/src/lib/crypto.ts';
import { asProblem, call } from '../support/http.ts';
import { runPacer, type CommandResult } from '../support/process.ts';
import { startTestServer, type TestServer } from '../support/test-server.ts';

let server: TestServer;

beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => {
  await server.stop();
});

/** `npm run pacer -- <args>` against this server's database. */
function pacer(...args: string[]): Promise<CommandResult> {
  return runPacer(args, {
    ...process.env,
    DATABASE_URL: server.databaseUrl,
    PACER_BASE_URL: server.config.baseUrl,
    PACER_LOG_LEVEL: 'warn',
  });
}

const json = (result: CommandResult) => JSON.parse(result.stdout) as Record<string, unknown>;

describe('operator CLI', () => {
  it('app:create without --owner fails with one line naming user:create --admin while there is no admin', async () => {
    const plain = await pacer('user:create', '--email', 'first@example.test', '--password', 'long password', '--json');
    expect(json(plain)).toMatchObject({ email: 'first@example.test', role: 'user' });
    const orphan = await pacer('app:create', '--name', 'Orphan', '--redirect-uri', 'https://orphan.example.test/cb');
    expect(orphan.code).toBe(1);
    expect(orphan.stderr.trim().split('\n')).toHaveLength(1);
    expect(orphan.stderr).toContain('user:create --admin');
    expect(await server.db.selectFrom('oauthClients').where('name', '=', 'Orphan').execute()).toHaveLength(0);
  });

  it('user:create refuses a common password, saying why', async () => {
    for (const password of ['password', '12345678', 'Password1']) {
      const result = await pacer('user:create', '--email', 'weak@example.test', '--password', password, '--admin');
      expect(result.code).toBe(1);
      expect(result.stderr).toContain('most common passwords');
    }
  });

  it('user:create --admin makes an admin and plain user:create a plain user', async () => {
    const first = await pacer(
      'user:create',
      '--email',
      'coach@example.test',
      '--password',
      'long password',
      '--name',
      'Coach',
      '--admin',
      '--json',
    );
    expect(first.code).toBe(0);
    expect(json(first)).toMatchObject({ email: 'coach@example.test', role: 'admin', name: 'Coach' });
    const second = await pacer(
      'user:create',
      '--email',
      'Rider@Example.test',
      '--password',
      'long password',
      '--time-zone',
      'Europe/Paris',
      '--json',
    );
    expect(json(second)).toMatchObject({ role: 'user', timeZone: 'Europe/Paris' });
    const stored = await server.db.selectFrom('users').select(['email', 'passwordHash']).execute();
    for (const user of stored) expect(user.passwordHash).toMatch(/^scrypt\$/);
  });

  it('user:create refuses a taken e-mail (any case), a short password and a bad time zone', async () => {
    const taken = await pacer('user:create', '--email', 'RIDER@example.test', '--password', 'long password');
    expect(taken.code).toBe(1);
    expect(taken.stderr).toContain('already exists');
    const short = await pacer('user:create', '--email', 'x@example.test', '--password', 'short');
    expect(short.code).toBe(1);
    expect(short.stderr).toContain('password');
    const zone = await pacer(
      'user:create',
      '--email',
      'y@example.test',
      '--password',
      'long password',
      '--time-zone',
      'Mars/Olympus',
    );
    expect(zone.stderr).toContain('timeZone');
  });

  it('app:create prints the client id and secrets once and stores only hashes', async () => {
    const result = await pacer(
      'app:create',
      '--name',
      'Garage app',
      '--redirect-uri',
      'https://garage.example.test/cb',
      '--redirect-uri',
      'http://127.0.0.1:8765/cb',
      '--scope',
      'health:write nutrition:write',
      '--scope',
      'profile:read',
      '--json',
    );
    expect(result.code).toBe(0);
    const app = json(result);
    expect(app).toMatchObject({
      name: 'Garage app',
      redirectUris: ['https://garage.example.test/cb', 'http://127.0.0.1:8765/cb'],
      scopes: ['health:write', 'nutrition:write', 'profile:read'],
      public: false,
    });
    const stored = await server.db
      .selectFrom('oauthClients')
      .selectAll()
      .where('clientId', '=', String(app['clientId']))
      .executeTakeFirstOrThrow();
    expect(stored.clientSecretHash).toBe(sha256Hex(String(app['clientSecret'])));
    expect(stored.webhookSecretHash).toBe(sha256Hex(String(app['webhookSecret'])));
    const list = await pacer('app:list', '--json');
    expect((json(list)['apps'] as { clientId: string }[]).map((entry) => entry.clientId)).toContain(app['clientId']);
  });

  it('app:create refuses non-HTTPS, fragment and relative redirect URIs and unknown scopes', async () => {
    for (const uri of ['http://garage.example.test/cb', 'https://garage.example.test/cb#x', '/cb']) {
      const result = await pacer('app:create', '--name', 'Bad', '--redirect-uri', uri);
      expect(result.code).toBe(1);
      expect(result.stderr).toContain('redirectUris');
    }
    const scope = await pacer(
      'app:create',
      '--name',
      'Bad',
      '--redirect-uri',
      'https://a.example.test/cb',
      '--scope',
      'everything',
    );
    expect(scope.stderr).toContain('unknown scope "everything"');
  });

  it('app:create --public makes a client without a secret', async () => {
    const app = json(
      await pacer('app:create', '--name', 'Phone', '--redirect-uri', 'http://localhost/cb', '--public', '--json'),
    );
    expect(app['clientSecret']).toBeUndefined();
    expect(app['public']).toBe(true);
  });

  it('token:create issues a working developer token with exactly the given scopes', async () => {
    const result = await pacer(
      'token:create',
      '--email',
      'coach@example.test',
      '--scope',
      'health:write',
      '--scope',
      'health:read',
      '--json',
    );
    expect(result.code).toBe(0);
    const token = json(result);
    expect(token).toMatchObject({ token_type: 'Bearer', expires_in: 3600, scope: 'health:write health:read' });
    expect(token['refresh_token']).toBeUndefined();
    const accessToken = String(token['access_token']);
    expect(
      (await call(server.url, 'POST', '/api/wellness', { token: accessToken, body: { date: '2026-03-03', hrv: 52 } }))
        .status,
    ).toBe(201);
    const denied = await call(server.url, 'POST', '/api/nutrition', {
      token: accessToken,
      body: { date: '2026-03-03', items: [] },
    });
    expect(asProblem(denied.body).code).toBe('insufficient_scope');
  });

  it('token:create with --resource {base}/mcp makes a token REST refuses', async () => {
    const token = json(
      await pacer(
        'token:create',
        '--email',
        'coach@example.test',
        '--scope',
        'health:write',
        '--resource',
        server.config.mcpResource,
        '--json',
      ),
    );
    expect(token['resource']).toBe(server.config.mcpResource);
    const res = await call(server.url, 'POST', '/api/wellness', {
      token: String(token['access_token']),
      body: { date: '2026-03-04' },
    });
    expect(res.status).toBe(401);
    const foreign = await pacer(
      'token:create',
      '--email',
      'coach@example.test',
      '--scope',
      'health:write',
      '--resource',
      'https://evil.example/mcp',
    );
    expect(foreign.code).toBe(1);
    expect(foreign.stderr).toContain('resource');
  });

  it('answers an unknown command with usage and an unknown user with an error', async () => {
    const unknown = await pacer('frobnicate');
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('Usage: npm run pacer');
    const missing = await pacer('token:create', '--email', 'nobody@example.test', '--scope', 'health:read');
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('No user');
  });

  it('migrate is idempotent', async () => {
    const result = await pacer('migrate');
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('up to date');
  });
});
