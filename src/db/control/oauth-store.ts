import { and, asc, eq, gt, inArray, isNull, lt, or, sql } from 'drizzle-orm'
import type { BunSQLiteDatabase } from 'drizzle-orm/bun-sqlite'
import { oauthClients, oauthCodes, oauthGrants, oauthTokens, ownerInvites, ownerLogins, owners } from './schema.ts'

export type OwnerLogin = typeof ownerLogins.$inferSelect
export type OAuthClient = typeof oauthClients.$inferSelect
export type OAuthGrant = typeof oauthGrants.$inferSelect
export type OAuthCode = typeof oauthCodes.$inferSelect
export type OAuthToken = typeof oauthTokens.$inferSelect
type Owner = typeof owners.$inferSelect

/** A token with its grant, its client's name and its owner: what a request needs to run as the grant. */
export type TokenWithGrant = { token: OAuthToken; grant: OAuthGrant; owner: Owner; clientName: string }

/**
 * Sign-in and OAuth in control.db (CONTRACT §28): logins and password hashes, invitations,
 * clients, grants, codes and tokens. Secrets are kept only as hashes (argon2id for passwords,
 * SHA-256 for the 256-bit random tokens, which no dictionary can guess).
 */
export class OAuthStore {
  constructor(private readonly db: BunSQLiteDatabase) {}

  private readonly tokenQuery = () =>
    this.db
      .select({ token: oauthTokens, grant: oauthGrants, owner: owners, clientName: oauthClients.name })
      .from(oauthTokens)
      .innerJoin(oauthGrants, eq(oauthGrants.id, oauthTokens.grantId))
      .innerJoin(owners, eq(owners.id, oauthGrants.ownerId))
      .innerJoin(oauthClients, eq(oauthClients.id, oauthGrants.clientId))
      .where(eq(oauthTokens.tokenHash, sql.placeholder('hash')))
      .prepare()
  private tokenLookup?: ReturnType<typeof this.tokenQuery>

  /** One primary-key lookup: a token, its grant and owner. */
  findToken(hash: string): TokenWithGrant | undefined {
    this.tokenLookup ??= this.tokenQuery()
    return this.tokenLookup.get({ hash })
  }

  // ---- logins and passwords

  findLoginByName(login: string): OwnerLogin | undefined {
    return this.db.select().from(ownerLogins).where(eq(ownerLogins.login, login)).get()
  }

  findLogin(ownerId: string): OwnerLogin | undefined {
    return this.db.select().from(ownerLogins).where(eq(ownerLogins.ownerId, ownerId)).get()
  }

  /** Sets the owner's login name and/or password hash (a row is made the first time). */
  saveLogin(ownerId: string, changes: { login?: string; passwordHash?: string }, now: number): void {
    const existing = this.findLogin(ownerId)
    if (!existing) {
      if (changes.login === undefined) throw new Error('a new login needs a login name')
      this.db
        .insert(ownerLogins)
        .values({ ownerId, login: changes.login, passwordHash: changes.passwordHash ?? null, passwordSetAt: changes.passwordHash ? now : null, createdAt: now })
        .run()
      return
    }
    this.db
      .update(ownerLogins)
      .set({
        ...(changes.login !== undefined ? { login: changes.login } : {}),
        ...(changes.passwordHash !== undefined ? { passwordHash: changes.passwordHash, passwordSetAt: now } : {}),
      })
      .where(eq(ownerLogins.ownerId, ownerId))
      .run()
  }

  /** A new invitation voids the owner's older unused ones: one live link at a time. */
  createInvite(ownerId: string, tokenHash: string, now: number, expiresAt: number): void {
    this.db.transaction((tx) => {
      tx.update(ownerInvites)
        .set({ usedAt: now })
        .where(and(eq(ownerInvites.ownerId, ownerId), isNull(ownerInvites.usedAt)))
        .run()
      tx.insert(ownerInvites).values({ tokenHash, ownerId, createdAt: now, expiresAt, usedAt: null }).run()
    })
  }

  /** The invitation, if it can still be used. */
  findUsableInvite(tokenHash: string, now: number) {
    const invite = this.db.select().from(ownerInvites).where(eq(ownerInvites.tokenHash, tokenHash)).get()
    return invite && invite.usedAt === null && invite.expiresAt > now ? invite : undefined
  }

  /** Uses the invitation and sets the password, at once; false when it was used meanwhile. */
  acceptInvite(tokenHash: string, passwordHash: string, now: number): boolean {
    return this.db.transaction(
      (tx) => {
        const used = tx
          .update(ownerInvites)
          .set({ usedAt: now })
          .where(and(eq(ownerInvites.tokenHash, tokenHash), isNull(ownerInvites.usedAt), gt(ownerInvites.expiresAt, now)))
          .returning({ ownerId: ownerInvites.ownerId })
          .all()
        const ownerId = used[0]?.ownerId
        if (!ownerId) return false
        tx.update(ownerLogins).set({ passwordHash, passwordSetAt: now }).where(eq(ownerLogins.ownerId, ownerId)).run()
        return true
      },
      { behavior: 'immediate' },
    )
  }

  // ---- clients

  createClient(client: OAuthClient): void {
    this.db.insert(oauthClients).values(client).run()
  }

  findClient(id: string): OAuthClient | undefined {
    return this.db.select().from(oauthClients).where(eq(oauthClients.id, id)).get()
  }

  // ---- codes

  createCode(code: OAuthCode): void {
    this.db.insert(oauthCodes).values(code).run()
  }

  /**
   * Redeems a code once: makes its grant and the grant's first tokens in one transaction. A code
   * already redeemed revokes the grant it made (it was stolen or replayed) and gives nothing.
   */
  redeemCode(
    codeHash: string,
    now: number,
    make: (code: OAuthCode) => { grant: OAuthGrant; tokens: OAuthToken[] } | null,
  ): { outcome: 'unknown' } | { outcome: 'reused' } | { outcome: 'refused' } | { outcome: 'redeemed'; grant: OAuthGrant } {
    return this.db.transaction(
      (tx) => {
        const code = tx.select().from(oauthCodes).where(eq(oauthCodes.codeHash, codeHash)).get()
        if (!code) return { outcome: 'unknown' as const }
        if (code.grantId !== null) {
          this.revokeGrantIn(tx, code.grantId, now)
          return { outcome: 'reused' as const }
        }
        if (code.expiresAt <= now) return { outcome: 'unknown' as const }
        const made = make(code)
        if (!made) return { outcome: 'refused' as const }
        tx.insert(oauthGrants).values(made.grant).run()
        tx.insert(oauthTokens).values(made.tokens).run()
        tx.update(oauthCodes).set({ grantId: made.grant.id }).where(eq(oauthCodes.codeHash, codeHash)).run()
        return { outcome: 'redeemed' as const, grant: made.grant }
      },
      { behavior: 'immediate' },
    )
  }

  // ---- refresh

  /**
   * Rotates a refresh token: marks it used and stores its successors, in one transaction. A
   * refresh token used before revokes its whole grant (it was copied: RFC 9700 §4.14.2).
   */
  rotateRefresh(
    tokenHash: string,
    now: number,
    make: (found: { grant: OAuthGrant; clientId: string }) => { tokens: OAuthToken[]; expiresAt: number } | null,
  ): { outcome: 'unknown' | 'reused' | 'refused' } | { outcome: 'rotated'; grant: OAuthGrant } {
    return this.db.transaction(
      (tx) => {
        const row = tx
          .select({ token: oauthTokens, grant: oauthGrants })
          .from(oauthTokens)
          .innerJoin(oauthGrants, eq(oauthGrants.id, oauthTokens.grantId))
          .where(eq(oauthTokens.tokenHash, tokenHash))
          .get()
        if (row?.token.kind !== 'refresh' || row.grant.revokedAt !== null || row.token.expiresAt <= now) return { outcome: 'unknown' as const }
        if (row.token.usedAt !== null) {
          this.revokeGrantIn(tx, row.grant.id, now)
          return { outcome: 'reused' as const }
        }
        const made = make({ grant: row.grant, clientId: row.grant.clientId })
        if (!made) return { outcome: 'refused' as const }
        tx.update(oauthTokens).set({ usedAt: now }).where(eq(oauthTokens.tokenHash, tokenHash)).run()
        tx.insert(oauthTokens).values(made.tokens).run()
        tx.update(oauthGrants).set({ expiresAt: made.expiresAt }).where(eq(oauthGrants.id, row.grant.id)).run()
        return { outcome: 'rotated' as const, grant: { ...row.grant, expiresAt: made.expiresAt } }
      },
      { behavior: 'immediate' },
    )
  }

  // ---- grants

  findGrant(id: string): (OAuthGrant & { clientName: string }) | undefined {
    return this.db
      .select({ grant: oauthGrants, clientName: oauthClients.name })
      .from(oauthGrants)
      .innerJoin(oauthClients, eq(oauthClients.id, oauthGrants.clientId))
      .where(eq(oauthGrants.id, id))
      .all()
      .map(({ grant, clientName }) => ({ ...grant, clientName }))[0]
  }

  /** The owner's grants after (createdAt, id), oldest first; live ones only unless `all`. */
  listGrants(ownerId: string, after: { createdAt: number; id: string } | null, limit: number, all: boolean, now: number) {
    return this.db
      .select({ grant: oauthGrants, clientName: oauthClients.name })
      .from(oauthGrants)
      .innerJoin(oauthClients, eq(oauthClients.id, oauthGrants.clientId))
      .where(
        and(
          eq(oauthGrants.ownerId, ownerId),
          after ? or(gt(oauthGrants.createdAt, after.createdAt), and(eq(oauthGrants.createdAt, after.createdAt), gt(oauthGrants.id, after.id))) : undefined,
          all ? undefined : and(isNull(oauthGrants.revokedAt), gt(oauthGrants.expiresAt, now)),
        ),
      )
      .orderBy(asc(oauthGrants.createdAt), asc(oauthGrants.id))
      .limit(limit)
      .all()
      .map(({ grant, clientName }) => ({ ...grant, clientName }))
  }

  /** A refresh that asked for fewer scopes: the grant keeps only those from now on. */
  narrowGrant(id: string, scopes: string[]): void {
    this.db.update(oauthGrants).set({ scopes }).where(eq(oauthGrants.id, id)).run()
  }

  /** Revokes a grant and every token of it; a second revoke keeps the first time. */
  revokeGrant(id: string, now: number): void {
    this.db.transaction((tx) => this.revokeGrantIn(tx, id, now), { behavior: 'immediate' })
  }

  private revokeGrantIn(tx: Pick<BunSQLiteDatabase, 'update' | 'delete'>, id: string, now: number): void {
    tx.update(oauthGrants)
      .set({ revokedAt: sql`coalesce(${oauthGrants.revokedAt}, ${now})` })
      .where(eq(oauthGrants.id, id))
      .run()
    tx.delete(oauthTokens).where(eq(oauthTokens.grantId, id)).run()
  }

  touchGrants(lastUsed: Map<string, number>): void {
    this.db.transaction((tx) => {
      for (const [id, at] of lastUsed) tx.update(oauthGrants).set({ lastUsedAt: at }).where(eq(oauthGrants.id, id)).run()
    })
  }

  /**
   * Housekeeping: expired tokens, codes and invitations go, and clients registered over a day ago
   * that never got a grant (open registration must not grow the file without end).
   */
  purge(now: number): void {
    this.db.transaction((tx) => {
      tx.delete(oauthTokens).where(lt(oauthTokens.expiresAt, now)).run()
      tx.delete(oauthCodes)
        .where(lt(oauthCodes.expiresAt, now - 86_400_000))
        .run()
      tx.delete(ownerInvites).where(lt(ownerInvites.expiresAt, now)).run()
      const stale = tx
        .select({ id: oauthClients.id })
        .from(oauthClients)
        .where(
          and(
            lt(oauthClients.createdAt, now - 86_400_000),
            sql`not exists (select 1 from ${oauthGrants} where ${oauthGrants.clientId} = ${oauthClients.id})`,
            sql`not exists (select 1 from ${oauthCodes} where ${oauthCodes.clientId} = ${oauthClients.id})`,
          ),
        )
        .limit(10_000)
        .all()
        .map((row) => row.id)
      if (stale.length > 0) tx.delete(oauthClients).where(inArray(oauthClients.id, stale)).run()
    })
  }

  /** Everything of one owner, inside `ControlStore.deleteOwner`'s transaction; returns its grant ids (for their counters). */
  deleteOwnerIn(tx: Pick<BunSQLiteDatabase, 'delete' | 'select'>, ownerId: string): string[] {
    const grants = tx
      .select({ id: oauthGrants.id })
      .from(oauthGrants)
      .where(eq(oauthGrants.ownerId, ownerId))
      .all()
      .map((g) => g.id)
    if (grants.length > 0) tx.delete(oauthTokens).where(inArray(oauthTokens.grantId, grants)).run()
    tx.delete(oauthCodes).where(eq(oauthCodes.ownerId, ownerId)).run()
    tx.delete(oauthGrants).where(eq(oauthGrants.ownerId, ownerId)).run()
    tx.delete(ownerInvites).where(eq(ownerInvites.ownerId, ownerId)).run()
    tx.delete(ownerLogins).where(eq(ownerLogins.ownerId, ownerId)).run()
    return grants
  }
}
