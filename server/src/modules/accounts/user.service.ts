import { z } from 'zod';
import type { Db } from '../../db/database.ts';
import type { User } from '../../db/tables.ts';
import { AppError, formatIssuePath } from '../../errors.ts';
import { hashPassword } from '../../lib/crypto.ts';
import { isValidTimeZone } from '../../lib/dates.ts';
import { findUserByEmail, insertUser, lockUserCreation } from './user.repository.ts';
import {
  COMMON_PASSWORD_MESSAGE,
  isCommonPassword,
  PASSWORD_MAX_LENGTH,
  PASSWORD_MIN_LENGTH,
} from './password-policy.ts';

export const NewAccountSchema = z.object({
  email: z
    .email()
    .max(254)
    .transform((email) => email.trim()),
  password: z
    .string()
    .min(PASSWORD_MIN_LENGTH, `must be at least ${PASSWORD_MIN_LENGTH} characters`)
    .max(PASSWORD_MAX_LENGTH)
    .refine((password) => !isCommonPassword(password), COMMON_PASSWORD_MESSAGE),
  name: z.string().trim().min(1).max(200).optional(),
  timeZone: z.string().refine(isValidTimeZone, 'must be an IANA time zone such as Europe/Berlin').optional(),
  admin: z.boolean().optional(),
});
export type NewAccount = z.input<typeof NewAccountSchema>;

/**
 * Create an account: a plain user unless `admin: true`, which only the
 * operator's CLI passes (`user:create --admin`). Public sign-up never makes an
 * admin, not even the first account of a deployment: on a server reachable
 * from the internet a stranger could be first (docs/design.md §3 "Identity
 * and accounts").
 */
export async function createUser(db: Db, input: NewAccount): Promise<User> {
  const parsed = NewAccountSchema.safeParse(input);
  if (!parsed.success) {
    throw new AppError('validation_failed', 'The account details are invalid.', {
      errors: parsed.error.issues.map((issue) => ({ path: formatIssuePath(issue.path), message: issue.message })),
    });
  }
  const account = parsed.data;
  const passwordHash = await hashPassword(account.password);
  return db.transaction().execute(async (trx) => {
    await lockUserCreation(trx);
    if (await findUserByEmail(trx, account.email)) {
      throw new AppError('conflict', 'An account with this e-mail address already exists.', {
        errors: [{ path: 'email', message: 'already registered' }],
      });
    }
    return insertUser(trx, {
      email: account.email,
      passwordHash,
      name: account.name ?? null,
      role: account.admin === true ? 'admin' : 'user',
      ...(account.timeZone ? { timeZone: account.timeZone } : {}),
    });
  });
}

export interface SignUpOptions {
  /**
   * Addresses public sign-up must not take: `PACER_MCP_DCR_OWNER_EMAIL`. Sign-up
   * does not prove an address, so a stranger who signed up first with the one
   * the operator configured would own every dynamically registered client;
   * the operator creates that account with `user:create`.
   */
  readonly reservedEmails: readonly (string | undefined)[];
}

/** Public sign-up (`POST /signup`): a plain user, never on a reserved address. */
export async function signUp(db: Db, input: Omit<NewAccount, 'admin'>, options: SignUpOptions): Promise<User> {
  const email = input.email.trim().toLowerCase();
  if (options.reservedEmails.some((reserved) => reserved?.trim().toLowerCase() === email)) {
    throw new AppError('validation_failed', 'The account details are invalid.', {
      errors: [{ path: 'email', message: "is reserved for this server's operator" }],
    });
  }
  return createUser(db, { ...input, admin: false });
}
