import type { ImportFormat } from './types.ts'

/**
 * A file's format from its first bytes (CONTRACT §24), for `format=auto`: OFX by its header or
 * `<OFX>` tag (QFX when Quicken's `<INTU.BID>` is there), camt.053 by its `BkToCstmrStmt`, QIF by
 * a `!Type:`, `!Account` or `!Option` line, anything else CSV.
 */
export function detectFormat(text: string): ImportFormat {
  const head = text.slice(0, 4096).trimStart()
  const upper = head.toUpperCase()
  if (upper.startsWith('OFXHEADER') || upper.includes('<OFX>') || upper.includes('<?OFX')) return /<INTU\.BID>/i.test(text) ? 'qfx' : 'ofx'
  if (head.startsWith('<')) return 'camt053'
  if (/^!(type:|account|option:|clear:)/i.test(head)) return 'qif'
  return 'csv'
}
