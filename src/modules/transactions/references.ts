import type { Tenant } from '../../db/tenant/tenant.ts'
import { type AccountRow, findAccount } from '../accounts/queries.ts'
import { type CategoryRow, findCategory, isVisibleTo } from '../categories/queries.ts'
import { findPayee, type PayeeRow } from '../payees/queries.ts'
import { findPayeeNamed, resolvePayeeName } from '../payees/service.ts'
import { findTag, findTagByNormalizedName, type TagRow } from '../tags/queries.ts'
import { resolveTagName } from '../tags/service.ts'
import { normalizeName } from '../payees/normalize.ts'
import { findTransactionByExternalId, type TransactionRow } from './queries.ts'

/**
 * The rows a transaction write reads to check and resolve its references, each read once per
 * write: a batch of 500 items naming one account, twenty payees and five categories reads 26
 * rows instead of 1,500 (and its tags and legs' payees alike). Only valid inside the one database transaction that made it (nothing
 * else writes to the file meanwhile); after a rollback to a savepoint (a dry run's failed item,
 * which may have created a payee) call `forget()`.
 */
export class References {
  private readonly accounts = new Map<string, AccountRow | undefined>()
  private readonly categories = new Map<string, CategoryRow | undefined>()
  private readonly payees = new Map<string, PayeeRow | undefined>()
  private readonly payeesByName = new Map<string, PayeeRow>()
  private readonly transactions = new Map<string, TransactionRow | undefined>()
  private readonly tags = new Map<string, TagRow | undefined>()
  private readonly tagsByName = new Map<string, TagRow>()

  constructor(
    readonly tenant: Tenant,
    /** The owner's country, which decides which system categories they may use. */
    readonly country: string | null,
  ) {}

  account(id: string): AccountRow | undefined {
    return remembered(this.accounts, id, () => findAccount(this.tenant, id))
  }

  /** The category when it exists, whether or not the owner may use it (a payee's category is trusted). */
  category(id: string): CategoryRow | undefined {
    return remembered(this.categories, id, () => findCategory(this.tenant, id))
  }

  /** The category when it exists and the owner may use it. */
  visibleCategory(id: string): CategoryRow | undefined {
    const row = this.category(id)
    return row && isVisibleTo(row, this.country) ? row : undefined
  }

  payee(id: string): PayeeRow | undefined {
    return remembered(this.payees, id, () => findPayee(this.tenant, id))
  }

  /** The payee a `payeeName` means, created on first use (see `resolvePayeeName`); `field` is named in its errors. */
  payeeNamed(name: string, field = 'payeeName'): PayeeRow {
    let row = this.payeesByName.get(name)
    if (!row) {
      row = resolvePayeeName(this.tenant, name, field)
      this.payeesByName.set(name, row)
    }
    return row
  }

  /** The name a `payeeName` will be stored under: its payee's when one is found by name or alias, else the name itself. Creates nothing. */
  payeeShownAs(name: string): string {
    const trimmedName = name.trim()
    return (this.payeesByName.get(trimmedName) ?? findPayeeNamed(this.tenant, trimmedName))?.name ?? trimmedName
  }

  /** The tag a name means, if there is one yet: nothing is created. */
  existingTag(name: string): TagRow | undefined {
    const normalized = normalizeName(name)
    return normalized ? findTagByNormalizedName(this.tenant, normalized) : undefined
  }

  tag(id: string): TagRow | undefined {
    return remembered(this.tags, id, () => findTag(this.tenant, id))
  }

  /** The tag a name in `tagNames` means, created on first use (see `resolveTagName`). */
  tagNamed(name: string, field: string): TagRow {
    let row = this.tagsByName.get(name)
    if (!row) {
      row = resolveTagName(this.tenant, name, field)
      this.tagsByName.set(name, row)
      this.tags.set(row.id, row)
    }
    return row
  }

  transactionByExternalId(externalId: string): TransactionRow | undefined {
    return remembered(this.transactions, externalId, () => findTransactionByExternalId(this.tenant, externalId))
  }

  /** Keeps the externalId lookups true after this write stored `row` (which was `before`). */
  stored(row: TransactionRow, before?: TransactionRow): void {
    if (before?.externalId != null) this.transactions.set(before.externalId, undefined)
    if (row.externalId !== null) this.transactions.set(row.externalId, row)
  }

  forget(): void {
    for (const map of [this.accounts, this.categories, this.payees, this.payeesByName, this.transactions, this.tags, this.tagsByName]) map.clear()
  }
}

function remembered<K, V>(map: Map<K, V | undefined>, key: K, read: () => V | undefined): V | undefined {
  if (map.has(key)) return map.get(key)
  const value = read()
  map.set(key, value)
  return value
}
