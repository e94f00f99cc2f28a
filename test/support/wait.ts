/** Resolve after `ms` milliseconds: for pacing a load or a retry, never for waiting on a state (see waitFor). */
export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * Poll `check` until it gives a value other than `undefined` or `false`, and
 * resolve to that value; after `timeoutMs`, fail naming `what` was awaited.
 */
export async function waitFor<T>(
  check: () => Promise<T | undefined | false>,
  what: string,
  timeoutMs = 10_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(20);
  }
}
