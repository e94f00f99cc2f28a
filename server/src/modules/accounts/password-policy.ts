import { createRequire } from 'node:module';
import type * as CommonLanguage from '@zxcvbn-ts/language-common';

/**
 * What a new password must meet, NIST SP 800-63B §5.1.1.2 ("Memorized Secret
 * Verifiers"): at least 8 characters, at least 64 allowed (we take 1024), no
 * composition rules, and not on a list of commonly used or breached passwords.
 * The list is zxcvbn-ts's `passwords-common` (≈49,000 passwords ranked by how
 * often they appear in breach corpora), compared without letter case so
 * `Password` is refused like `password`.
 */
export const PASSWORD_MIN_LENGTH = 8;
export const PASSWORD_MAX_LENGTH = 1024;

const require = createRequire(import.meta.url);
let commonPasswords: ReadonlySet<string> | undefined;

/**
 * The list, read on the first password checked: zxcvbn-ts's dictionaries are
 * a few MB of heap that a process never signing anyone up (an API node
 * serving tokens) would otherwise hold from start-up. Required, not imported:
 * the check runs inside a synchronous zod refinement.
 */
function commonPasswordList(): ReadonlySet<string> {
  if (!commonPasswords) {
    const { dictionary } = require('@zxcvbn-ts/language-common') as typeof CommonLanguage;
    commonPasswords = new Set(dictionary['passwords-common'].filter((entry) => entry.length >= PASSWORD_MIN_LENGTH));
  }
  return commonPasswords;
}

export const COMMON_PASSWORD_MESSAGE =
  'is one of the most common passwords, which attackers try first; choose a less common one (a few unrelated words work well)';

/** True when `password` is on the common-password list (any letter case). */
export function isCommonPassword(password: string): boolean {
  return commonPasswordList().has(password.normalize('NFKC').toLowerCase());
}
