/**
 * Why a process could not start (or a command could not open the database),
 * said so that an operator can act on it. Thrown from the place that knows
 * the cause; `main.ts` prints it as the one line on stderr:
 * `Pacer did not start: <cause>. <fix>.`
 */
export type StartupErrorCode =
  | 'data_dir_not_usable'
  | 'embedded_postgres_missing'
  | 'embedded_postgres_unreachable'
  | 'embedded_postgres_failed'
  | 'database_unreachable'
  | 'database_rejected_login'
  | 'database_missing'
  | 'database_not_migrated'
  | 'port_unavailable';

export class StartupError extends Error {
  override readonly name = 'StartupError';
  readonly code: StartupErrorCode;
  /** What the operator should do, as an imperative sentence without the final period. */
  readonly fix: string;

  /** `cause` is the message: what went wrong, lower case, without the final period. */
  constructor(code: StartupErrorCode, cause: string, fix: string, options?: ErrorOptions) {
    super(cause, options);
    this.code = code;
    this.fix = fix;
  }
}

/** Messages from the OS or a library may span lines; the report must not. */
function oneLine(text: string): string {
  return text.replace(/\s*\n\s*/g, ' ').trim();
}

/**
 * The one line printed for a failure: a `StartupError` names cause and fix;
 * anything else (unexpected) at least names its message.
 */
export function describeFailure(error: unknown): string {
  if (error instanceof StartupError) return oneLine(`${error.message}. ${error.fix}.`);
  if (error instanceof Error) {
    const code = (error as NodeJS.ErrnoException).code;
    const message = error.message || error.name;
    return oneLine(code && !message.includes(code) ? `${message} (${code})` : message);
  }
  return oneLine(String(error));
}
