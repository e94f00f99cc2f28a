import { contract, type PacerContract } from '@pacer/contract';
import { initClient, tsRestFetchApi, type ApiFetcherArgs } from '@ts-rest/core';

export interface PacerClientOptions {
  /** Where Pacer runs, e.g. `https://pacer.example.com` (no trailing slash needed). */
  readonly baseUrl: string;
  /**
   * An OAuth 2.0 access token, or a function that returns the current one.
   * Omit it only for the routes that take none: the incoming webhook (its
   * own secret or signature) and the developer portal's session API.
   */
  readonly accessToken?: string | (() => string | Promise<string>);
  /** Extra headers sent with every request (e.g. `X-Request-Id`). */
  readonly headers?: Readonly<Record<string, string>>;
  /** Check response bodies against the contract's schemas (off by default). */
  readonly validateResponse?: boolean;
}

/**
 * A typed Pacer client. Every route of the contract is a method that takes
 * `{ body, query, params }` and resolves to `{ status, body, headers }`, where
 * `status` narrows `body` to the schema the contract declares for it:
 *
 * ```ts
 * const pacer = createPacerClient({ baseUrl, accessToken });
 * const res = await pacer.wellness.upsertWellness({ body: { date: '2026-11-20', hrv: 62 } });
 * if (res.status === 201 || res.status === 200) console.log(res.body.hrv);
 * else console.error(res.body.code, res.body.errors); // an RFC 9457 problem
 * ```
 */
export function createPacerClient(options: PacerClientOptions) {
  const baseUrl = options.baseUrl.replace(/\/+$/, '');
  const token = options.accessToken;
  return initClient(contract, {
    baseUrl,
    validateResponse: options.validateResponse ?? false,
    throwOnUnknownStatus: false,
    api: async (args: ApiFetcherArgs) => {
      const accessToken = typeof token === 'function' ? await token() : token;
      return tsRestFetchApi({
        ...args,
        headers: {
          ...args.headers,
          ...options.headers,
          ...(accessToken === undefined ? {} : { authorization: `Bearer ${accessToken}` }),
        },
      });
    },
  });
}

export type PacerClient = ReturnType<typeof createPacerClient>;
export type { PacerContract };
