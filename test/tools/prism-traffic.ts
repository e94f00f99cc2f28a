/**
 * The suite's REST traffic, as PACER_RECORD_TRAFFIC recorded it, checked
 * against openapi.json by Stoplight Prism's own validator (the library its
 * validating proxy runs): each exchange is routed to its operation with
 * Prism's router, its answer checked with `validateOutput` (status, media
 * type, body, headers) and, when the server accepted the request (below
 * 400), its request with `validateInput`: a request the document refuses
 * but the service takes is a disagreement too. Requests the service refused
 * are the tests' deliberately bad ones; Prism's findings on them are counted
 * apart, not as violations.
 *
 *   PACER_RECORD_TRAFFIC=/tmp/traffic.jsonl npx vitest run --project integration test/integration/wellness.test.ts
 *   node test/tools/prism-traffic.ts /tmp/traffic.jsonl [openapi.json]
 *
 * Prints the violation count and each distinct violation; exits 1 when there is any.
 */
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import type { IPrismDiagnostic } from '@stoplight/prism-core';
import {
  getHttpOperationsFromSpec,
  type IHttpRequest,
  type IHttpResponse,
  type PrismHttpComponents,
} from '@stoplight/prism-http';
import { validateInput, validateOutput } from '@stoplight/prism-http/dist/validator/index.js';
import type { HttpMethod } from '@stoplight/types';
import type { RecordedExchange } from '../../server/src/http/traffic-recorder.ts';

export interface Violation {
  /** `output`: the answer disagrees with the document; `input`: an accepted request does. */
  readonly side: 'input' | 'output';
  /** `GET /api/wellness/{date} 200`: the operation and status, not the concrete URL. */
  readonly where: string;
  readonly code: string;
  readonly message: string;
  readonly path: string;
}

export interface TrafficReport {
  readonly exchanges: number;
  /** Exchanges on paths or methods the document does not describe (not its to judge). */
  readonly unrouted: number;
  /** Answers whose body the recorder did not keep (not JSON, or too large): judged on status and headers. */
  readonly skippedBodies: number;
  readonly violations: readonly Violation[];
  /** Prism's findings on requests the service itself refused (expected: the tests send bad input). */
  readonly refusedRequestFindings: number;
}

type Either<L, R> = { readonly _tag: 'Left'; readonly left: L } | { readonly _tag: 'Right'; readonly right: R };

const ROOT = path.resolve(import.meta.dirname, '../..');
/**
 * Prism's router is CommonJS with an `exports.default`, which Node and Vite
 * hand to an `import` differently: `require` reads it the same way in both.
 */
const { default: route } = createRequire(import.meta.url)('@stoplight/prism-http/dist/router/index.js') as {
  default: PrismHttpComponents['route'];
};

/** The exchanges of a JSON Lines recording. */
export async function readRecording(file: string): Promise<RecordedExchange[]> {
  const text = await readFile(file, 'utf8');
  return text
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line) as RecordedExchange);
}

function toPrismRequest(exchange: RecordedExchange): IHttpRequest {
  const url = new URL(exchange.url, 'http://recorded.invalid');
  const query: Record<string, string | string[]> = {};
  for (const name of new Set(url.searchParams.keys())) {
    const values = url.searchParams.getAll(name);
    query[name] = values.length === 1 ? (values[0] ?? '') : values;
  }
  return {
    method: exchange.method.toLowerCase() as HttpMethod,
    url: { path: url.pathname, query },
    headers: exchange.request.headers,
    ...(exchange.request.body === undefined ? {} : { body: exchange.request.body }),
  };
}

function toPrismResponse(exchange: RecordedExchange): IHttpResponse {
  return {
    statusCode: exchange.response.status,
    headers: exchange.response.headers,
    ...(exchange.response.body === undefined ? {} : { body: exchange.response.body }),
  };
}

const findings = (result: Either<readonly IPrismDiagnostic[], unknown>): readonly IPrismDiagnostic[] =>
  result._tag === 'Left' ? result.left : [];

/** Prism's verdict on every recorded exchange, against the document at `documentPath` (or a document object). */
export async function validateTraffic(
  exchanges: readonly RecordedExchange[],
  document: string | object = path.join(ROOT, 'openapi.json'),
): Promise<TrafficReport> {
  const resources = await getHttpOperationsFromSpec(document);
  const violations: Violation[] = [];
  let unrouted = 0;
  let refusedRequestFindings = 0;
  let skippedBodies = 0;
  for (const exchange of exchanges) {
    const input = toPrismRequest(exchange);
    const routed = route({ resources, input });
    if (routed._tag === 'Left') {
      unrouted += 1;
      continue;
    }
    const resource = routed.right;
    const where = `${resource.method.toUpperCase()} ${resource.path} ${String(exchange.response.status)}`;
    // An answer whose body was not recorded (a FIT file, say) is judged on its status and headers only.
    if (exchange.response.bodySkipped !== undefined) skippedBodies += 1;
    const output = findings(validateOutput({ resource, element: toPrismResponse(exchange) })).filter(
      (finding) => exchange.response.bodySkipped === undefined || !aboutTheBody(finding),
    );
    violations.push(...output.map((finding) => violation('output', where, finding)));
    // A body the recorder skipped (a FIT upload, say) cannot be judged: only the rest of that request is.
    const inputFindings = findings(validateInput({ resource, element: input })).filter(
      (finding) => exchange.request.bodySkipped === undefined || !aboutTheBody(finding),
    );
    if (exchange.response.status < 400) {
      violations.push(...inputFindings.map((finding) => violation('input', where, finding)));
    } else {
      refusedRequestFindings += inputFindings.length;
    }
  }
  return { exchanges: exchanges.length, unrouted, skippedBodies, violations, refusedRequestFindings };
}

/** A finding on a request's body, or on its absence (`Body parameter is required` has no path). */
const aboutTheBody = (finding: IPrismDiagnostic): boolean =>
  finding.path?.[0] === 'body' || (finding.code === 'required' && (finding.path ?? []).length === 0);

function violation(side: Violation['side'], where: string, finding: IPrismDiagnostic): Violation {
  return {
    side,
    where,
    code: String(finding.code),
    message: finding.message,
    path: (finding.path ?? []).join('.'),
  };
}

async function main(): Promise<void> {
  const [file, document] = process.argv.slice(2);
  if (!file) {
    process.stderr.write('usage: node test/tools/prism-traffic.ts <traffic.jsonl> [openapi.json]\n');
    process.exit(2);
  }
  const report = await validateTraffic(await readRecording(file), document ?? path.join(ROOT, 'openapi.json'));
  const distinct = new Map<string, number>();
  for (const entry of report.violations) {
    const key = `${entry.side} ${entry.where}: ${entry.path} ${entry.message}`;
    distinct.set(key, (distinct.get(key) ?? 0) + 1);
  }
  process.stdout.write(
    `${String(report.exchanges)} exchanges, ${String(report.unrouted)} on routes the document does not describe, ` +
      `${String(report.skippedBodies)} answers without a recorded body; ` +
      `${String(report.violations.length)} Prism violations (${String(distinct.size)} distinct); ` +
      `${String(report.refusedRequestFindings)} findings on requests the service refused\n`,
  );
  for (const [key, count] of distinct) process.stdout.write(`  ${String(count)}x ${key}\n`);
  process.exitCode = report.violations.length > 0 ? 1 : 0;
}

if (import.meta.filename === path.resolve(process.argv[1] ?? '')) await main();
