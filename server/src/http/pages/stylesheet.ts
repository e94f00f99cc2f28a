import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { type RequestHandler, Router } from 'express';

/**
 * The pages' one stylesheet (pacer.css next to this file's source), read once when the server starts.
 * Named from the server package's folder, so the build (server/dist) reads the same file.
 */
const STYLESHEET = readFileSync(new URL('../../../src/http/pages/pacer.css', import.meta.url), 'utf8');

const STYLESHEET_HASH = createHash('sha256').update(STYLESHEET).digest('hex');

/**
 * Where the pages link it: the content hash is part of the URL, so a browser may keep it for a year
 * without asking again, and a changed stylesheet is a new URL that no cache holds yet.
 */
export const STYLESHEET_PATH = `/assets/pacer.${STYLESHEET_HASH.slice(0, 16)}.css`;

const sendStylesheet: RequestHandler = (_req, res) => {
  res.setHeader('Cache-Control', 'public, max-age=31536000, immutable');
  // Its content hash: a reload that revalidates (If-None-Match) gets a 304 from Express's `send`.
  res.setHeader('ETag', `"${STYLESHEET_HASH}"`);
  res.setHeader('X-Content-Type-Options', 'nosniff');
  res.type('text/css').send(STYLESHEET);
};

/** `GET /assets/pacer.<hash>.css`; any other hash is a plain 404 (the pages are never cached, so they name this one). */
export function stylesheetRoute(): Router {
  return Router().get(STYLESHEET_PATH, sendStylesheet);
}
