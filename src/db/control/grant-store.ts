import { and, asc, desc, eq, gt, isNull, or, sql } from 'drizzle-orm'
import type { BunSQLiteDatabase } from 'drizzle-orm/bun-sqlite'
import { ledgerGrants, owners } from './schema.ts'

export type LedgerGrant = typeof ledgerGrants.$inferSelect
type Owner = typeof owners.$inferSelect

/** A grant with the subject owner whose ledger it opens: what a delegated request runs as. */
export type GrantWithSubject = { grant: LedgerGrant; subject: Owner }

export const isLiveGrant = (grant: LedgerGrant, now: number): boolean => grant.revokedAt === null && (grant.expiresAt === null || grant.expiresAt > now)

/**
 * Households' grants in control.db (CONTRACT §30): who may act on whose ledger, with which
 * scopes. Made, listed and revoked by the subject's side (admin CLI or `/v1/grants`); read on
 * every delegated request (one indexed lookup, then cached by the authenticator's generation).
 */
export class GrantStore {
  /** `changed`: marks a change this connection made, so cached delegations are read again (ExternalCommits.changedHere). */
  constructor(
    private readonly db: BunSQLiteDatabase,
    private readonly changed: () => void = () => {},
  ) {}

  private readonly liveQuery = () =>
    this.db
      .select({ grant: ledgerGrants, subject: owners })
      .from(ledgerGrants)
      .innerJoin(owners, eq(owners.id, ledgerGrants.subjectOwnerId))
      .where(
        and(
          eq(ledgerGrants.granteeOwnerId, sql.placeholder('grantee')),
          eq(ledgerGrants.subjectOwnerId, sql.placeholder('subject')),
          isNull(ledgerGrants.revokedAt),
        ),
      )
      .orderBy(desc(ledgerGrants.createdAt), desc(ledgerGrants.id))
      .limit(1)
      .prepare()
  private liveLookup?: ReturnType<typeof this.liveQuery>

  /** The newest unrevoked grant from `subject` to `grantee`, with the subject (expiry is the caller's to check). */
  findUnrevoked(subject: string, grantee: string): GrantWithSubject | undefined {
    this.liveLookup ??= this.liveQuery()
    return this.liveLookup.get({ subject, grantee })
  }

  find(id: string): LedgerGrant | undefined {
    return this.db.select().from(ledgerGrants).where(eq(ledgerGrants.id, id)).get()
  }

  /**
   * Makes a grant unless a live one from the same subject to the same grantee exists (then
   * returns that one and makes nothing): checked and written in one write transaction.
   */
  create(row: LedgerGrant): { created: true; grant: LedgerGrant } | { created: false; grant: LedgerGrant } {
    return this.db.transaction(
      (tx) => {
        const existing = tx
          .select()
          .from(ledgerGrants)
          .where(and(eq(ledgerGrants.subjectOwnerId, row.subjectOwnerId), eq(ledgerGrants.granteeOwnerId, row.granteeOwnerId), isNull(ledgerGrants.revokedAt)))
          .all()
          .find((grant) => isLiveGrant(grant, row.createdAt))
        if (existing) return { created: false as const, grant: existing }
        tx.insert(ledgerGrants).values(row).run()
        return { created: true as const, grant: row }
      },
      { behavior: 'immediate' },
    )
  }

  /** Grants given (`subject`) or received (`grantee`), oldest first; live ones only unless `all`. */
  list(side: { subject?: string; grantee?: string }, all: boolean, now: number): LedgerGrant[] {
    return this.db
      .select()
      .from(ledgerGrants)
      .where(
        and(
          side.subject !== undefined || side.grantee !== undefined
            ? or(
                side.subject !== undefined ? eq(ledgerGrants.subjectOwnerId, side.subject) : undefined,
                side.grantee !== undefined ? eq(ledgerGrants.granteeOwnerId, side.grantee) : undefined,
              )
            : undefined,
          all ? undefined : and(isNull(ledgerGrants.revokedAt), or(isNull(ledgerGrants.expiresAt), gt(ledgerGrants.expiresAt, now))),
        ),
      )
      .orderBy(asc(ledgerGrants.createdAt), asc(ledgerGrants.id))
      .all()
  }

  /** Revokes a grant once; a second revoke keeps the first time. */
  revoke(id: string, at: number): LedgerGrant | undefined {
    this.db
      .update(ledgerGrants)
      .set({ revokedAt: sql`coalesce(${ledgerGrants.revokedAt}, ${at})` })
      .where(eq(ledgerGrants.id, id))
      .run()
    this.changed()
    return this.find(id)
  }

  /** Ends every grant an owner gave or received (its deletion): the rows go with the owner. */
  deleteOwnerIn(tx: Pick<BunSQLiteDatabase, 'delete'>, ownerId: string): void {
    tx.delete(ledgerGrants)
      .where(or(eq(ledgerGrants.subjectOwnerId, ownerId), eq(ledgerGrants.granteeOwnerId, ownerId)))
      .run()
    this.changed()
  }
}
