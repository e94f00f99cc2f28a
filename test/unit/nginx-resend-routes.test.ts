/**
 * deploy/nginx.conf sends a write that nginx lost with its own 502 once more
 * (`@resend_keyed_write`), but only one Pacer recognises as the same request:
 * `$pacer_resend_safe` is 1 for a request with an `Idempotency-Key` on the
 * routes that honour it. A write route that ignores the header must never be
 * resent (it could be applied twice), and a route that honours it should be.
 * The routes that honour it are those whose operations in openapi.json declare
 * the header.
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { buildOpenApiDocument } from '../../server/src/http/openapi.ts';

const ROOT = path.resolve(import.meta.dirname, '../..');
const WRITE_METHODS = ['post', 'put', 'patch', 'delete'] as const;

/** The map's one regex that makes `$pacer_resend_safe` 1, as a JavaScript RegExp (the pattern is plain PCRE). */
async function resendSafePattern(): Promise<RegExp> {
  const conf = await readFile(path.join(ROOT, 'deploy/nginx.conf'), 'utf8');
  const block = /map "\$http_idempotency_key\|\$uri" \$pacer_resend_safe \{([^}]*)\}/.exec(conf)?.[1];
  if (block === undefined) throw new Error('deploy/nginx.conf has no $pacer_resend_safe map');
  const regexes = [...block.matchAll(/"~([^"]+)"\s+1;/g)].map((match) => match[1] ?? '');
  expect(regexes).toHaveLength(1);
  return new RegExp(regexes[0] ?? '');
}

describe('the nginx example resends a lost write', () => {
  it('only to write routes that take an Idempotency-Key, and to every one of them', async () => {
    const safe = await resendSafePattern();
    const document = buildOpenApiDocument();
    const verdicts: Record<string, { takesKey: boolean; resentWithKey: boolean }> = {};
    for (const [route, item] of Object.entries(document.paths)) {
      // A path as a client sends it: every `{param}` filled in.
      const uri = route.replaceAll(/\{[^}]+\}/g, 'x1');
      for (const method of WRITE_METHODS) {
        const operation = (item as Record<string, { parameters?: { name?: string }[] } | undefined>)[method];
        if (!operation) continue;
        const takesKey = (operation.parameters ?? []).some((p) => p.name?.toLowerCase() === 'idempotency-key');
        verdicts[`${method.toUpperCase()} ${route}`] = { takesKey, resentWithKey: safe.test(`key-1|${uri}`) };
      }
    }
    expect(Object.keys(verdicts).length).toBeGreaterThan(5);
    for (const [operation, verdict] of Object.entries(verdicts)) {
      expect(verdict.resentWithKey, operation).toBe(verdict.takesKey);
    }
    // Without a key nothing is resent; OAuth and pages (not in the contract) never.
    expect(safe.test('|/api/wellness')).toBe(false);
    expect(safe.test('key-1|/api/oauth/token')).toBe(false);
    expect(safe.test('key-1|/api/wellness-other')).toBe(false);
  });
});
