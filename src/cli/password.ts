import { tokenHash } from '../platform/auth.ts'
import { hashPassword, MIN_PASSWORD_LENGTH, normalizeLogin, passwordProblem } from '../platform/passwords.ts'
import { INVITE_TTL_MS, mintInvite } from '../modules/oauth/tokens.ts'
import { type Flags, optional, required, UsageError } from './args.ts'
import { ownerExists } from './owner-fields.ts'
import type { Session } from './session.ts'
import type { CommandSpec, FlagSpec } from './spec.ts'

/**
 * How an owner comes to sign in (CONTRACT §2, §28): a login name and a password, set by the
 * operator from stdin, or by the owner through a one-time invitation link.
 */

const OWNER_FLAG: FlagSpec = { name: 'owner', value: 'ID', about: 'the owner (see: owner list)' }
const LOGIN_FLAG: FlagSpec = {
  name: 'login',
  value: 'NAME',
  about: 'the name the owner signs in with, e.g. an email address (1–100 characters, unique without regard to case); required the first time',
}

/** The login name to keep: `--login` checked and free, or the owner's present one. */
function chooseLogin(s: Session, ownerId: string, flags: Flags): string {
  const given = optional(flags, 'login')
  const present = s.control.oauth.findLogin(ownerId)
  if (given === undefined) {
    if (!present) throw new UsageError(`this owner has no login name yet: add --login NAME (an email address makes a good one)`)
    return present.login
  }
  const login = normalizeLogin(given)
  if (login === null) throw new UsageError('--login must be 1 to 100 characters, without control characters')
  const holder = s.control.oauth.findLoginByName(login)
  if (holder && holder.ownerId !== ownerId) throw new UsageError(`the login "${login}" belongs to another owner; choose another`)
  return login
}

/** The password from the terminal (typed twice, not shown) or from the first line of stdin. */
async function readPassword(): Promise<string> {
  if (process.stdin.isTTY) {
    const first = await askHidden('New password: ')
    const second = await askHidden('The same again: ')
    if (first !== second) throw new UsageError('the two passwords differ; nothing was changed')
    return first
  }
  const text = await new Response(Bun.stdin.stream()).text()
  return (text.split('\n')[0] ?? '').replace(/\r$/, '')
}

function askHidden(question: string): Promise<string> {
  process.stderr.write(question)
  const stdin = process.stdin
  stdin.setRawMode(true)
  stdin.resume()
  return new Promise((resolve, reject) => {
    let typed = ''
    const done = (error?: Error) => {
      stdin.off('data', onData)
      stdin.setRawMode(false)
      stdin.pause()
      process.stderr.write('\n')
      if (error) reject(error)
      else resolve(typed)
    }
    const onData = (chunk: Buffer) => {
      for (const char of chunk.toString('utf8')) {
        if (char === '\r' || char === '\n') return done()
        if (char === '\u0003' || char === '\u0004') return done(new UsageError('cancelled; nothing was changed'))
        if (char === '\u007f' || char === '\b') typed = [...typed].slice(0, -1).join('')
        else typed += char
      }
    }
    stdin.on('data', onData)
  })
}

export const setPassword: CommandSpec = {
  name: 'owner set-password',
  summary: "set an owner's login name and password for signing in (the password is read from stdin or typed, never an argument)",
  usage: '--owner ID [--login NAME]   (the password: typed twice on a terminal, else the first line of stdin)',
  flags: [OWNER_FLAG, LOGIN_FLAG],
  example: 'owner set-password --owner "$OWNER" --login ana@example.com < password.txt',
  dataDir: 'needs',
  notes: [
    `The password must have at least ${MIN_PASSWORD_LENGTH} characters and not be among the most common passwords.`,
    'Apps signed in before keep working; revoke them with DELETE /v1/keys/{id} if the password leaked.',
    'Prints (--json): {"owner", "login", "passwordSet": true}.',
  ].join('\n'),
  async run(s, { flags }) {
    const ownerId = required(flags, 'owner')
    ownerExists(s, ownerId)
    const login = chooseLogin(s, ownerId, flags)
    const password = await readPassword()
    const problem = passwordProblem(password, login)
    if (problem) throw new UsageError(`${problem}; nothing was changed`)
    s.control.oauth.saveLogin(ownerId, { login, passwordHash: await hashPassword(password) }, Date.now())
    s.out.result({ owner: ownerId, login, passwordSet: true }, `${ownerId} signs in as ${login} with the new password.`)
    return 0
  },
}

export const invite: CommandSpec = {
  name: 'owner invite',
  summary: 'a one-time link (24 hours) where the owner sets their own password; needs PUBLIC_URL',
  usage: '--owner ID [--login NAME]',
  flags: [OWNER_FLAG, LOGIN_FLAG],
  example: 'owner invite --owner "$OWNER" --login ana@example.com',
  dataDir: 'needs',
  notes: [
    'The link is printed once; pfin keeps only a hash of it. A new invitation voids the older ones of the owner.',
    'It sets a password; it does not change one already set until it is used.',
    'Prints (--json): {"owner", "login", "url", "expiresAt"}.',
  ].join('\n'),
  run(s, { flags }) {
    const ownerId = required(flags, 'owner')
    const base = s.config.publicUrl
    if (!base) throw new UsageError('PUBLIC_URL is not set: the link must name where people reach this server (e.g. PUBLIC_URL=https://pfin.example.com)')
    ownerExists(s, ownerId)
    const login = chooseLogin(s, ownerId, flags)
    const now = Date.now()
    s.control.oauth.saveLogin(ownerId, { login }, now)
    const token = mintInvite()
    const expiresAt = now + INVITE_TTL_MS
    s.control.oauth.createInvite(ownerId, tokenHash(token), now, expiresAt)
    const url = `${base}/signin?invite=${token}`
    s.out.result(
      { owner: ownerId, login, url, expiresAt },
      `Send this link to the owner; it works once, until ${new Date(expiresAt).toISOString()}:\n\n  ${url}\n\nThey sign in as ${login}.`,
    )
    return 0
  },
}
