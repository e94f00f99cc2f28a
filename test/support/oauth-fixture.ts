import type { User } from '../../server/src/db/tables.ts';
import { makeUser, type UserFactoryOptions } from './factories.ts';
import { registerClient, signIn, type CookieJar, type RegisterClientOptions, type TestClient } from './oauth-flow.ts';
import { startTestServer, type TestServer } from './test-server.ts';

/** A test server with one user signed in to it through the real /login form. */
export interface SignedInFixture {
  readonly server: TestServer;
  readonly user: User;
  /** The user's browser session: pass it to `authorizeAs`, `issueCode`, `runCodeFlow`. */
  readonly jar: CookieJar;
}

/** A signed-in user and the OAuth client that user registered. */
export interface OAuthFixture extends SignedInFixture {
  readonly app: TestClient;
}

export interface SignedInFixtureOptions {
  /** PACER_* overrides for the test server. */
  readonly env?: Record<string, string>;
  readonly user?: UserFactoryOptions;
}

export interface OAuthFixtureOptions extends SignedInFixtureOptions {
  /** The client `registerClient` makes (default: confidential, https://client.example.test/callback). */
  readonly client?: RegisterClientOptions;
}

/**
 * Start a test server, make a user and sign it in. The caller stops `server`
 * (in `afterAll`); if a step after the start fails, the server is stopped here.
 */
export async function startSignedIn(options: SignedInFixtureOptions = {}): Promise<SignedInFixture> {
  const server = await startTestServer(options.env);
  try {
    const user = await makeUser(server.db, options.user);
    const jar = await signIn(server.url, user.email);
    return { server, user, jar };
  } catch (error) {
    await server.stop();
    throw error;
  }
}

/**
 * A test file's OAuth setup in one call: a test server, a signed-in user, and
 * an OAuth client that user registered. Use it in `beforeAll`, and stop
 * `server` in `afterAll`:
 *
 *     beforeAll(async () => {
 *       ({ server, jar, app } = await startOAuthFixture({ client: { isPublic: true } }));
 *     });
 */
export async function startOAuthFixture(options: OAuthFixtureOptions = {}): Promise<OAuthFixture> {
  const signedIn = await startSignedIn(options);
  try {
    const app = await registerClient(signedIn.server.db, signedIn.user, options.client);
    return { ...signedIn, app };
  } catch (error) {
    await signedIn.server.stop();
    throw error;
  }
}
