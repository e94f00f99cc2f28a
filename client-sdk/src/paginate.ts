import { PacerError, type PacerProblem } from './errors.ts';

type AnyRoute = (args: never) => Promise<{ status: number; body: unknown; headers: Headers }>;

/** The item type of a cursor list: its 200 body is `{ items: T[], nextCursor: string | null }`. */
export type PageItem<F extends AnyRoute> = Extract<Awaited<ReturnType<F>>, { status: 200 }>['body'] extends {
  readonly items: readonly (infer Item)[];
  readonly nextCursor: string | null;
}
  ? Item
  : never;

/** The arguments of a cursor list, without the cursor the iterator manages. */
export type PageArgs<F extends AnyRoute> = [PageItem<F>] extends [never]
  ? never
  : Parameters<F>[0] extends infer Args
    ? Args extends { query?: infer Query }
      ? Omit<Args, 'query'> & { query?: Omit<NonNullable<Query>, 'cursor'> }
      : Args
    : never;

/**
 * Every item of a cursor list, page after page, following `nextCursor` until
 * it is `null`. Works with every list route of the contract whose answer is
 * `{ items, nextCursor }` (wellness, nutrition, planned workouts, workouts,
 * reports, recovery, webhook deliveries); a route without a cursor is a type
 * error. A non-200 answer (after the client's own retries) throws
 * `PacerError` with the problem document.
 *
 * ```ts
 * for await (const day of paginate(pacer.wellness.listWellness, { query: { from: '2026-01-01', to: '2026-06-30' } })) {
 *   console.log(day.date, day.hrv);
 * }
 * ```
 */
export async function* paginate<F extends AnyRoute>(
  route: F,
  ...rest: [PageItem<F>] extends [never]
    ? [notACursorList: never]
    : undefined extends Parameters<F>[0]
      ? [args?: PageArgs<F>]
      : [args: PageArgs<F>]
): AsyncGenerator<PageItem<F>, void, undefined> {
  const args = (rest[0] ?? {}) as { query?: Record<string, unknown> };
  const call = route as unknown as (args: unknown) => Promise<{ status: number; body: unknown; headers: Headers }>;
  let cursor: string | undefined;
  for (;;) {
    const query = { ...args.query, ...(cursor === undefined ? {} : { cursor }) };
    const res = await call({ ...args, query });
    if (res.status !== 200) {
      const problem = typeof res.body === 'object' && res.body !== null ? (res.body as PacerProblem) : undefined;
      throw new PacerError(`HTTP ${res.status} while paging${problem?.code ? ` (${problem.code})` : ''}`, {
        status: res.status,
        code: problem?.code ?? 'unexpected_status',
        requestId: res.headers.get('x-request-id') ?? undefined,
        problem,
        attempts: 1,
      });
    }
    const page = res.body as { items: PageItem<F>[]; nextCursor: string | null };
    yield* page.items;
    if (page.nextCursor === null) return;
    cursor = page.nextCursor;
  }
}
