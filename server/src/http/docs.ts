import { createHash } from 'node:crypto';
import { type RequestHandler, Router } from 'express';
import swaggerUi, { type SwaggerUiOptions } from 'swagger-ui-express';
import { servedOpenApiDocument } from './openapi.ts';

const SWAGGER_OPTIONS: SwaggerUiOptions = { customSiteTitle: 'Pacer API' };

/**
 * The one `<style>` Swagger UI's script adds at run time: inside the SVG of
 * its top-bar logo (swagger-ui-dist 5). A new version that adds another
 * fails the CSP test in Chromium (test/integration/hostile-surface.test.ts).
 */
const RUNTIME_STYLES = ['.logo_small_svg__cls-2{fill:#fff}.logo_small_svg__cls-3{fill:#85ea2d}'];

function sha256Source(text: string): string {
  return `'sha256-${createHash('sha256').update(text, 'utf8').digest('base64')}'`;
}

/**
 * The Content-Security-Policy of the `/docs` page. Swagger UI's page loads
 * its scripts and stylesheet from `/docs` itself; what it has inline are two
 * `<style>` blocks and a `style` attribute on its icon sprite, and its
 * script adds one `<style>` (`RUNTIME_STYLES`), each allowed
 * by its hash (CSP Level 3 §6.7.3: `'unsafe-hashes'` lets a hash match an
 * attribute), so no other inline style or any inline script runs. Icons are
 * `data:` images in its stylesheet; "Try it out" calls the API on this origin.
 * `frame-ancestors 'none'` (with X-Frame-Options for older browsers) keeps
 * the page out of other sites' frames (clickjacking).
 */
export function docsContentSecurityPolicy(html: string): string {
  const inline = [
    ...RUNTIME_STYLES,
    ...[...html.matchAll(/<style>([\s\S]*?)<\/style>/g)].map((match) => match[1] ?? ''),
    ...[...html.matchAll(/\sstyle="([^"]*)"/g)].map((match) => match[1] ?? ''),
  ];
  const hashes = [...new Set(inline.map(sha256Source))].join(' ');
  return [
    "default-src 'none'",
    "script-src 'self'",
    `style-src 'self' 'unsafe-hashes' ${hashes}`,
    "img-src 'self' data:",
    "font-src 'self' data:",
    "connect-src 'self'",
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'",
  ].join('; ');
}

/**
 * `GET /openapi.json` (the served document, this deployment's URLs) and
 * `/docs` (Swagger UI over it, with its security headers). The app imports
 * this module on the first request for either (load-on-first-request.ts):
 * an API process that never serves them holds neither the document nor the
 * OpenAPI generator.
 */
export function apiDocsRouter(baseUrl: string): Router {
  const document = servedOpenApiDocument(baseUrl);
  const router = Router();
  router.get('/openapi.json', (_req, res) => {
    res.json(document);
  });
  router.use('/docs', docsHandlers(document));
  return router;
}

function docsHandlers(openApi: object): RequestHandler[] {
  const policy = docsContentSecurityPolicy(swaggerUi.generateHTML(openApi, SWAGGER_OPTIONS));
  const securityHeaders: RequestHandler = (_req, res, next) => {
    res.setHeader('Content-Security-Policy', policy);
    res.setHeader('X-Frame-Options', 'DENY');
    res.setHeader('X-Content-Type-Options', 'nosniff');
    res.setHeader('Referrer-Policy', 'no-referrer');
    next();
  };
  return [securityHeaders, ...swaggerUi.serve, swaggerUi.setup(openApi, SWAGGER_OPTIONS)];
}
