/** Payee names are matched in one normal form: lower case, accents stripped, whitespace collapsed, trimmed. */
export function normalizeName(text: string): string {
  return text.normalize('NFD').replace(/\p{M}/gu, '').toLowerCase().replace(/\s+/g, ' ').trim()
}
