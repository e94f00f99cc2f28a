/**
 * Whether this process runs the server from its TypeScript sources (vitest,
 * the `npm run openapi`-style tools) or from its build (`npm start` and
 * `npm run pacer`: server/dist and migrations/dist, docs/design.md §2
 * "Memory"). The files it loads by path (the decoder worker, the migrations)
 * are taken from the same side, so a built server never loads TypeScript:
 * Node's type stripping alone costs a process about 20 MB.
 */
export const RUNS_FROM_SOURCE = import.meta.url.endsWith('.ts');
