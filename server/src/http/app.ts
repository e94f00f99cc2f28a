import { contract } from '@pacer/contract';
import { createExpressEndpoints } from '@ts-rest/express';
import express, { type Express } from 'express';
import type { PgBoss } from 'pg-boss';
import swaggerUi from 'swagger-ui-express';
import type { Config } from '../config.ts';
import type { Db } from '../db/database.ts';
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
import { mcpRouter } from '../mcp/mcp.router.ts';
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
import { servedOpenApiDocument } from './openapi.ts';
import { withRestRateLimits } from './rate-limit.middleware.ts';
import { accountPages, loadSession, pageHeaders } from './pages/account.pages.ts';
import { developerPages } from './pages/developer.pages.ts';
import { dashboardPages } from './pages/dashboard.page.ts';
import { settingsPages } from './pages/settings.pages.ts';
import { stylesheetRoute } from './pages/stylesheet.ts';
import { requestContext } from './request-context.ts';
import { checkingResponses } from './response-check.ts';
import { sql } from 'kysely';
import type { SecretBox } from '../lib/secret-box.ts';
import { developerWebhookRoutes, webhookRoutes } from './routes/webhooks.routes.ts';
import { requireSessionApi } from './session-api.ts';

export interface AppDeps {
  readonly config: Config;
  readonly db: Db;
  readonly boss: PgBoss;
  readonly logger: Logger;
  readonly secretBox: SecretBox;
  /** Where MCP tool calls are recorded (buffered; the runtime closes it on shutdown). */
  readonly mcpRecorder: McpExecutionRecorder;
}

export function createApp(deps: AppDeps): Express {
  const app = express();
  app.disable('x-powered-by');
  // Which peers' X-Forwarded-For names the client: req.ip (clientIpOf) follows it.
  app.set('trust proxy', deps.config.trustProxy);
  app.use(requestContext(deps.logger));

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
    res.status(ready ? 200 : 503).json({ status: ready ? 'ok' : 'unavailable', database, queue });
  });

  // The REST API first: every API request is matched against the layers before its route, and
  // no mount below shares a path with it (they serve /api/oauth, /.well-known, /mcp,
  // /api/webhooks, /api/developer, /api/admin, /docs and the pages).
  const { webhooks: _webhooks, developer: _developer, admin: _admin, ...restContract } = contract;
  // Under test, every answer is checked against the contract on its way out (response-check.ts).
  const checked = <T extends object>(routes: T): T => (deps.config.checkResponses ? checkingResponses(routes) : routes);
  createExpressEndpoints(
    restContract,
    checked({
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
      logInitialization: false,
      responseValidation: false,
      // Rate limits are counted while the token is looked up and decided first; no body is
      // read before both pass. Idempotency needs the principal and the parsed body.
      globalMiddleware: [withRestRateLimits(deps, restBearerAuth(deps)), jsonBody, idempotency(deps)],
      // Hand validation errors to our error handler: problem+json with each field's path.
      requestValidationErrorHandler: (error, _req, _res, next) => next(error),
    },
  );

  const openApi = servedOpenApiDocument(deps.config.baseUrl);
  app.get('/openapi.json', (_req, res) => {
    res.json(openApi);
  });
  app.use('/docs', swaggerUi.serve, swaggerUi.setup(openApi, { customSiteTitle: 'Pacer API' }));

  app.use(discoveryRouter(deps));
  // The MCP endpoint (docs/design.md §3 "MCP"); switched off, `/mcp` is a plain 404 like its metadata.
  if (deps.config.mcp.enabled) app.use(mcpRouter({ ...deps, recorder: deps.mcpRecorder }));
  app.use(registrationRouter(deps));
  app.use(oauthRouter(deps));

  // Incoming webhooks: no bearer token, raw body (the route reads it), their own auth.
  createExpressEndpoints(contract.webhooks, checked(webhookRoutes(deps)), app, {
    logInitialization: false,
    responseValidation: false,
    requestValidationErrorHandler: (error, _req, _res, next) => next(error),
  });
  // The developer portal's JSON API: the portal session, not a bearer token.
  createExpressEndpoints(contract.developer, checked(developerWebhookRoutes(deps)), app, {
    logInitialization: false,
    responseValidation: false,
    globalMiddleware: [loadSession(deps), requireSessionApi],
    requestValidationErrorHandler: (error, _req, _res, next) => next(error),
  });

  // Administrator routes: an admin user's bearer token (any scope) or an admin's portal session.
  // Mounted on the prefix rather than as ts-rest globalMiddleware: a single-route contract types
  // the middleware's `req.query` as the parsed query, which Express's RequestHandler does not accept.
  app.use('/api/admin', loadSession(deps), requireAdmin(deps));
  createExpressEndpoints(contract.admin, checked(adminRoutes(deps)), app, {
    logInitialization: false,
    responseValidation: false,
    requestValidationErrorHandler: (error, _req, _res, next) => next(error),
  });

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
  app.use(errorHandler(deps.logger));
  return app;
}
