/** Payee names are matched in one normal form: compatibility forms folded (NFKD), lower case, accents stripped, whitespace collapsed, trimmed. */
export function normalizeName(text: string): string {
  return text.normalize('NFKD').replace(/\p{M}/gu, '').toLowerCase().replace(/\s+/g, ' ').trim()
}
