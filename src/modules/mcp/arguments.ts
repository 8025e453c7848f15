import type { TSchema } from '@sinclair/typebox'

/**
 * What each tool argument means, for the arguments whose route schema says nothing (CONTRACT
 * §17: every argument is described). The route's own description wins; `<resource>.<name>`
 * entries are for names that mean different things on different resources (`type`, `name`,
 * `categoryId`). Building the tools fails on an argument described nowhere, so a new field
 * cannot reach an agent undescribed.
 */
const DESCRIPTIONS: Record<string, string> = {
  // Ids in paths and bodies
  accountId: 'the account’s id (acct_…), as list_accounts or get_context shows it',
  'transaction.accountId': 'the account the money leaves (an expense) or enters (income): an id from list_accounts or get_context',
  transactionId: 'the transaction’s id (txn_…)',
  categoryId: 'a category id (cat_…) from list_categories or get_context',
  'transaction.categoryId': 'the category (cat_…); null clears it; leave it out to keep it (or let the payee’s default category fill it)',
  'payee.categoryId': 'the category new transactions of this payee take when they name none; null clears it',
  payeeId: 'the payee’s id (pay_…); null clears it',
  tagId: 'the tag’s id (tag_…)',
  parentId: 'the parent category’s id; null or absent: top level',
  linkedAccountId: 'another of the owner’s accounts this one belongs with (a card’s bank account); null clears it',
  linkedPersonId: 'an id of your own for the person behind this payee; stored, never shown',
  transferToAccountId: 'on a transfer, the account that receives the money',
  // Names and text
  'account.name': 'the account’s display name, 1–200 characters',
  'category.name': 'the category’s name, 1–200 characters (fullName adds its parents’)',
  'payee.name': 'the payee’s name, 1–200 characters; unique ignoring case, accents and spaces',
  'tag.name': 'the tag’s name, 1–200 characters; unique ignoring case, accents and spaces',
  payeeName: 'the payee by name: found ignoring case and accents (also by alias), or created; instead of payeeId',
  note: 'free text, up to 2000 characters; null clears it',
  notes: 'free text about the account, up to 2000 characters; null clears it',
  aliases: 'other spellings of the payee (as bank statements write it), each matched like the name; replaces the list',
  subtype: 'a finer kind of account, free text (e.g. checking, savings); null clears it',
  providerSlug: 'the bank or provider, as a short key of your choice; null clears it',
  secondaryProviderSlug: 'a second provider key (e.g. the card network); null clears it',
  accountNumber: 'the account number as the user knows it (store only what the user wants stored); null clears it',
  color: 'a color of your choice, free text (e.g. #2a9d8f); null clears it',
  icon: 'an icon name of your choice, free text; null clears it',
  customFields: 'up to 50 label/value pairs; replaces the list',
  // Kinds and flags
  'account.type': 'physical, bank, ewallet, card, investment, crypto, loan or other',
  'category.type': 'expense or income; null for neither',
  isLiability: 'true for money owed (a loan, a credit card)',
  isFavourite: 'shown first by apps that sort favourites first',
  showInDashboard: 'whether apps show the account on their dashboard',
  isHidden: 'whether apps hide the account from everyday views',
  isMerchant: 'true for a shop or business, false for a person',
  isArchived: 'true archives (hidden from lists by default), false restores',
  isTransfer: 'true for money moved between two of the owner’s accounts (then send transferToAccountId)',
  sortOrder: 'a number apps sort accounts by; null clears it',
  // Money, dates and times
  balance: 'the current balance, an exact decimal; set outright (a reconciliation), never needed for a rename',
  currency: 'an upper-case currency code such as EUR, USD or BTC',
  amount: 'exact decimal, up to 8 places: positive = expense (money out), negative = income',
  destinationAmount: 'on a transfer between currencies, the amount the destination receives',
  exchangeRate: 'on a transfer between currencies, destination units per source unit',
  date: 'the day it happened, YYYY-MM-DD',
  time: 'the time of day, HH:MM or HH:MM:SS; null clears it',
  // Parts
  splits: 'the legs: 2–100 {amount, categoryId?, payeeId?, payeeName?, note?} summing exactly to amount, or [] to unsplit; replaces the legs',
  tagIds: 'up to 20 tag ids; replaces the transaction’s tags ([] clears them)',
  tagNames: 'up to 20 tag names, each found or created; instead of tagIds',
  // Rules and imports
  'rule.rule': 'a rule to try, as upsert_rule takes it (conditions, actions, match), without saving it; instead of ruleId',
  'rule.name': 'the rule’s name, 1–200 characters',
  'import.preset': 'a CSV layout given inline for this file (its columns, delimiter and formats), instead of a saved presetId',
  // Schedules
  'schedule.name': 'the schedule’s name, 1–200 characters (e.g. Rent)',
  'schedule.amount': 'the expected amount, exact decimal: positive = expense (money out), negative = income',
  'schedule.recurrence':
    'when it falls: {freq: daily|weekly|monthly|yearly, interval?, byMonthDay?, byWeekday?, start: YYYY-MM-DD, until? or count?, weekendAdjust?: none|before|after}',
  'schedule.tagIds': 'up to 20 tag ids, given to each transaction it posts; replaces the list',
  // Bulk
  patch: 'the fields to set on every item, as update_transaction takes them (an item’s own patch wins field by field)',
  // Reports
  groupBy: 'category, payee or month',
  'report.from': 'the first day of the range, YYYY-MM-DD (inclusive)',
  'report.to': 'the last day of the range, YYYY-MM-DD (inclusive)',
  'report.accountId': 'only this account’s transactions; absent: every account',
  // Lists
  from: 'the earliest date, YYYY-MM-DD (inclusive)',
  to: 'the latest date, YYYY-MM-DD (inclusive)',
  externalId: 'your own id for the record (1–200 characters); writes with the same externalId update the same record',
  'transaction.externalId': 'your own id for the transaction (1–200 characters), e.g. the bank’s transaction id; null removes it',
}

/** The description of argument `name` of a tool about `resource`: the schema's, else the table's; undefined when neither has one. */
export function argumentDescription(resource: string, name: string, schema: TSchema): string | undefined {
  const specific = DESCRIPTIONS[`${resource}.${name}`]
  if (specific !== undefined) return specific
  const own = (schema as { description?: string }).description ?? firstMemberDescription(schema)
  return own ?? DESCRIPTIONS[name]
}

/** `Nullable(x)` is `anyOf: [x, null]`: x's description speaks for it. */
function firstMemberDescription(schema: TSchema): string | undefined {
  const members = (schema as { anyOf?: TSchema[] }).anyOf
  return members?.map((member) => (member as { description?: string }).description).find((text) => text !== undefined)
}
