import { contract } from '@pacer/contract';
import { createExpressEndpoints } from '@ts-rest/express';
import express, { type Express } from 'express';
import type { PgBoss } from 'pg-boss';
import type { Config } from '../config.ts';
import type { Db } from '../db/database.ts';
import type { ReadRouter } from '../db/read-replica.ts';
import { noteWrites } from './read-routing.ts';
import type { Logger } from '../logger.ts';
import { nutritionRoutes } from './routes/nutrition.routes.ts';
import { plannedWorkoutsRoutes } from './routes/planned-workouts.routes.ts';
import { profileRoutes } from './routes/profile.routes.ts';
import { wellnessRoutes } from './routes/wellness.routes.ts';
import { workoutRoutes } from './routes/workouts.routes.ts';
import { reportRoutes } from './routes/reports.routes.ts';
import { analyticsRoutes } from './routes/analytics.routes.ts';
import { fuelRoutes } from './routes/fuel.routes.ts';
import { recommendationsRoutes } from './routes/recommendations.routes.ts';
import { MCP_PATH, mcpEndpoint } from '../mcp/mcp-endpoint.ts';
import { FitDecodeQueue } from '../modules/workouts/fit-decode-queue.ts';
import { sharedFitDecoderPool } from '../modules/workouts/fit-decoder.pool.ts';
import type { McpExecutionRecorder } from '../modules/mcp-audit/mcp-audit.service.ts';
import { purgeExpiredQueue } from '../queue/queues.ts';
import { restBearerAuth } from './bearer-auth.ts';
import { requireAdmin } from './admin-auth.ts';
import { adminPages } from './pages/admin.pages.ts';
import { adminRoutes } from './routes/admin.routes.ts';
import { errorHandler, notFoundHandler } from './error-handler.ts';
import { idempotency } from './idempotency.middleware.ts';
import { jsonBody } from './json-body.ts';
import { discoveryRouter } from './oauth/discovery.router.ts';
import { oauthRouter } from './oauth/oauth.router.ts';
import { registrationRouter } from './oauth/registration.router.ts';
import { withRestRateLimits } from './rate-limit.middleware.ts';
import { accountPages, loadSession, pageHeaders } from './pages/account.pages.ts';
import { developerPages } from './pages/developer.pages.ts';
import { dashboardPages } from './pages/dashboard.page.ts';
import { settingsPages } from './pages/settings.pages.ts';
import { configureCsrf } from './pages/csrf.ts';
import { stylesheetRoute } from './pages/stylesheet.ts';
import { loadOnFirstRequest } from './load-on-first-request.ts';
import { requestContext } from './request-context.ts';
import { recordTraffic } from './traffic-recorder.ts';
import { requestDeadline } from './timeouts.ts';
import { checkingResponses } from './response-check.ts';
import { sql } from 'kysely';
import type { SecretBox } from '../lib/secret-box.ts';
import { developerWebhookRoutes, webhookRoutes } from './routes/webhooks.routes.ts';
import { requireSessionApi } from './session-api.ts';
import { bearerApiCors, CORS_OAUTH_PATHS, restPathPrefixes } from './cors.ts';

export interface AppDeps {
  readonly config: Config;
  readonly db: Db;
  /** Where GET routes and MCP read tools read (read-routing.ts); writes and everything else use `db`. */
  readonly reads: ReadRouter;
  readonly boss: PgBoss;
  readonly logger: Logger;
  readonly secretBox: SecretBox;
  /** Where MCP tool calls are recorded (buffered; the runtime closes it on shutdown). */
  readonly mcpRecorder: McpExecutionRecorder;
}

/** The bearer-token REST API: every route but incoming webhooks, the portal's JSON API and admin. */
const { webhooks: _webhooks, developer: _developer, admin: _admin, ...REST_CONTRACT } = contract;

/** ts-rest's options for every mount: no start-up log, our own response check, validation errors to our handler. */
const TS_REST_OPTIONS = {
  logInitialization: false,
  responseValidation: false,
  // Hand validation errors to our error handler: problem+json with each field's path.
  requestValidationErrorHandler: (error: unknown, _req: unknown, _res: unknown, next: (error: unknown) => void) =>
    next(error),
} as const;

export function createApp(appDeps: AppDeps): Express {
  // One decode queue per app, i.e. per process (tests run several apps, each with its own limits, over the
  // process's one worker pool): uploads and first stream reads, REST and MCP, all take their place in it.
  const deps = {
    ...appDeps,
    decoding: new FitDecodeQueue(sharedFitDecoderPool(appDeps.config.fitDecoding.workers), appDeps.config.fitDecoding),
  };
  const app = express();
  app.disable('x-powered-by');
  // No ETag computed from every body: Express's would hash each answer after building it, writes
  // included, to spare the bytes of a 304 no client of the API asks for. The one resource meant to
  // be revalidated, the stylesheet, names its own (stylesheet.ts).
  app.set('etag', false);
  // Which peers' X-Forwarded-For names the client: req.ip (clientIpOf) follows it.
  app.set('trust proxy', deps.config.trustProxy);
  configureCsrf(app, deps.secretBox, deps.config.secureCookies);
  app.use(requestContext(deps.logger));
  // Tests only: the REST exchanges for a contract tester (PACER_RECORD_TRAFFIC).
  if (deps.config.recordTraffic) app.use(restPathPrefixes(contract), recordTraffic(deps.config.recordTraffic));
  app.use(requestDeadline(deps.config));
  // Before any route (a preflight carries no token): the REST API and the OAuth endpoints a browser app calls.
  const corsHandler = bearerApiCors(deps.config);
  if (corsHandler) app.use([...restPathPrefixes(REST_CONTRACT), ...CORS_OAUTH_PATHS], corsHandler);
  mountHealthRoutes(app, deps);
  mountRestApi(app, deps);
  // The OpenAPI document and Swagger UI, loaded with the first request for either.
  app.all(
    ['/openapi.json', '/docs', '/docs/*path'],
    loadOnFirstRequest(async () => (await import('./docs.ts')).apiDocsRouter(deps.config.baseUrl)),
  );
  app.use(discoveryRouter(deps));
  // The MCP endpoint (docs/design.md §3 "MCP"); switched off, `/mcp` is a plain 404 like its metadata.
  if (deps.config.mcp.enabled) app.all(MCP_PATH, mcpEndpoint({ ...deps, recorder: deps.mcpRecorder }));
  app.use(registrationRouter(deps));
  app.use(oauthRouter(deps));
  mountSessionAndWebhookApis(app, deps);
  app.use(stylesheetRoute());
  app.use(
    pageHeaders,
    loadSession(deps),
    accountPages(deps),
    settingsPages(deps),
    developerPages(deps),
    adminPages(deps),
    dashboardPages(deps),
  );
  app.use(notFoundHandler);
  app.use(errorHandler(deps.logger, { checkResponses: deps.config.checkResponses }));
  return app;
}

/** Under test, every answer is checked against the contract on its way out (response-check.ts). */
function checkedRoutes<T extends object>(deps: AppDeps, routes: T): T {
  return deps.config.checkResponses ? checkingResponses(routes) : routes;
}

/**
 * `/healthz` (the process runs) and `/readyz` (it can reach PostgreSQL and pg-boss), as routes of
 * the app itself: a router mounted at `/` would be entered, and left, by every request.
 */
function mountHealthRoutes(app: Express, deps: AppDeps): void {
  app.get('/healthz', (_req, res) => {
    res.json({ status: 'ok' });
  });
  app.get('/readyz', async (_req, res) => {
    const checks = await Promise.allSettled([
      sql`SELECT 1`.execute(deps.db),
      deps.boss.getQueue(purgeExpiredQueue.name),
    ]);
    const [database, queue] = checks.map((check) => (check.status === 'fulfilled' ? 'ok' : 'unavailable'));
    const ready = database === 'ok' && queue === 'ok';
    // The replica does not decide readiness: without it, reads go to the primary.
    const replica = deps.reads.status();
    res.status(ready ? 200 : 503).json({
      status: ready ? 'ok' : 'unavailable',
      database,
      queue,
      replica: replica.state,
      replicaLagMs: replica.lagMs,
    });
  });
}

/**
 * The REST API, mounted before everything else: every API request is matched against the layers
 * before its route, and no later mount shares a path with it (they serve /api/oauth, /.well-known,
 * /mcp, /api/webhooks, /api/developer, /api/admin, /docs and the pages).
 */
function mountRestApi(app: Express, deps: AppDeps & { readonly decoding: FitDecodeQueue }): void {
  createExpressEndpoints(
    REST_CONTRACT,
    checkedRoutes(deps, {
      wellness: wellnessRoutes(deps),
      nutrition: nutritionRoutes(deps),
      profile: profileRoutes(deps),
      plannedWorkouts: plannedWorkoutsRoutes(deps),
      workouts: workoutRoutes(deps),
      reports: reportRoutes(deps),
      analytics: analyticsRoutes(deps),
      fuel: fuelRoutes(deps),
      recommendations: recommendationsRoutes(deps),
    }),
    app,
    {
      ...TS_REST_OPTIONS,
      // Rate limits are counted while the token is looked up and decided first; no body is
      // read before both pass. Idempotency needs the principal and the parsed body.
      // A write is noted for read-your-writes once its answer is ready: installed before the
      // idempotency layer, so that layer's commit comes first and the note just before the answer.
      globalMiddleware: [withRestRateLimits(deps, restBearerAuth(deps)), jsonBody, noteWrites(deps), idempotency(deps)],
    },
  );
}

/** The APIs with their own authentication: incoming webhooks, the developer portal's JSON API, admin. */
function mountSessionAndWebhookApis(app: Express, deps: AppDeps): void {
  // Incoming webhooks: no bearer token, raw body (the route reads it), their own auth.
  createExpressEndpoints(contract.webhooks, checkedRoutes(deps, webhookRoutes(deps)), app, TS_REST_OPTIONS);
  // The developer portal's JSON API: the portal session, not a bearer token.
  createExpressEndpoints(contract.developer, checkedRoutes(deps, developerWebhookRoutes(deps)), app, {
    ...TS_REST_OPTIONS,
    globalMiddleware: [loadSession(deps), requireSessionApi],
  });
  // Administrator routes: an admin user's bearer token (any scope) or an admin's portal session.
  // Mounted on the prefix rather than as ts-rest globalMiddleware: a single-route contract types
  // the middleware's `req.query` as the parsed query, which Express's RequestHandler does not accept.
  app.use('/api/admin', loadSession(deps), requireAdmin(deps));
  createExpressEndpoints(contract.admin, checkedRoutes(deps, adminRoutes(deps)), app, TS_REST_OPTIONS);
}
