import common from './common-passwords.txt' with { type: 'text' }

/**
 * Owners' passwords (CONTRACT §28): argon2id hashes, as for keys, and a policy checked when a
 * password is set. No rules about character classes (NIST SP 800-63B): a length, a ceiling that
 * keeps one hash cheap, and a list of passwords people pick most.
 */

export const MIN_PASSWORD_LENGTH = 12
export const MAX_PASSWORD_LENGTH = 256

/**
 * The 308 passwords of at least 12 characters in the common-passwords list of
 * `@zxcvbn-ts/language-common` 4.1.3 (49,233 entries, MIT licence); the shorter ones are refused
 * by the length already. Compared without case.
 */
const COMMON = new Set(
  common
    .split('\n')
    .map((line) => line.trim().toLowerCase())
    .filter(Boolean),
)

/** Why a password may not be used, or null when it may. */
export function passwordProblem(password: string, login?: string): string | null {
  const length = [...password].length
  if (length < MIN_PASSWORD_LENGTH) return `the password must be at least ${MIN_PASSWORD_LENGTH} characters long`
  if (length > MAX_PASSWORD_LENGTH) return `the password must be at most ${MAX_PASSWORD_LENGTH} characters long`
  const lower = password.toLowerCase()
  if (COMMON.has(lower)) return 'this password is on a list of the most common passwords; choose another'
  if (login !== undefined && login.length >= 4 && lower.includes(login.toLowerCase())) return 'the password must not contain the login name'
  if (new Set(password).size < 4) return 'the password repeats too few characters; choose another'
  return null
}

/** The native argon2 module loads with the first password it checks or makes. */
let argon2Module: Promise<typeof import('@node-rs/argon2')> | undefined
const argon2 = () => (argon2Module ??= import('@node-rs/argon2'))

export async function hashPassword(password: string): Promise<string> {
  return (await argon2()).hash(password) // argon2id is the library's default
}

export async function verifyPassword(hash: string, password: string): Promise<boolean> {
  try {
    return await (await argon2()).verify(hash, password)
  } catch {
    return false
  }
}

/**
 * A login name as sign-in compares it: NFKC, lower case, trimmed. 1–100 characters, no control
 * characters; an email address makes a good one.
 */
export function normalizeLogin(login: string): string | null {
  const normalized = login.normalize('NFKC').trim().toLowerCase()
  const length = [...normalized].length
  if (length < 1 || length > 100 || /[\p{Cc}\p{Cs}]/u.test(normalized)) return null
  return normalized
}
