import { dictionary } from '@zxcvbn-ts/language-common';

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

const COMMON_PASSWORDS: ReadonlySet<string> = new Set(
  dictionary['passwords-common'].filter((entry) => entry.length >= PASSWORD_MIN_LENGTH),
);

export const COMMON_PASSWORD_MESSAGE =
  'is one of the most common passwords, which attackers try first; choose a less common one (a few unrelated words work well)';

/** True when `password` is on the common-password list (any letter case). */
export function isCommonPassword(password: string): boolean {
  return COMMON_PASSWORDS.has(password.normalize('NFKC').toLowerCase());
}
