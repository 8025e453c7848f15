/**
 * CSV records (RFC 4180, as banks bend it), read in one pass: fields split by the delimiter,
 * records by CRLF, LF or CR, `"` quotes a field (`""` inside is a quote, and a quoted field
 * may hold delimiters and line breaks), a quote inside an unquoted field is kept as text. Each
 * record remembers the line it starts on. Blank lines are dropped. Linear in the text whatever
 * its shape (CONTRACT §14): no field is scanned twice, and the limits stop a hostile file early.
 */

export interface CsvRecord {
  line: number
  cells: string[]
}

export class CsvError extends Error {}

const QUOTE = 0x22
const LF = 0x0a
const CR = 0x0d

export interface CsvLimits {
  /** Stop after this many records (the caller refuses a file with more rows than it takes). */
  maxRecords: number
  /** More fields than this in one record is no bank's layout. */
  maxFields: number
  /** A sample cut from a file: a quoted field still open at its end ends there instead of failing. */
  sample?: boolean
}

/** Line feeds in text[from, to): a scan of that span only (an indexOf would run on to the next one, however far). */
function countLines(text: string, from: number, to: number): number {
  let n = 0
  for (let i = from; i < to; i++) if (text.charCodeAt(i) === LF) n++
  return n
}

/** The records of `text`; `truncated` when `maxRecords` stopped it before the end. */
export function csvRecords(text: string, delimiter: string, limits: CsvLimits): { records: CsvRecord[]; truncated: boolean } {
  const records: CsvRecord[] = []
  const sep = delimiter.charCodeAt(0)
  const n = text.length
  let i = 0
  let line = 1
  while (i < n) {
    // Empty lines are stepped over without making a record.
    const first = text.charCodeAt(i)
    if (first === LF || first === CR) {
      i += first === CR && text.charCodeAt(i + 1) === LF ? 2 : 1
      line++
      continue
    }
    if (records.length >= limits.maxRecords) return { records, truncated: true }
    const start = line
    const cells: string[] = []
    let blank = true
    for (;;) {
      let cell: string
      if (text.charCodeAt(i) === QUOTE) {
        // Find the closing quote (a doubled one is text), then take the field in one slice.
        let close = i + 1
        for (; close < n; close++) {
          if (text.charCodeAt(close) !== QUOTE) continue
          if (text.charCodeAt(close + 1) !== QUOTE) break
          close++
        }
        if (close >= n && !limits.sample) throw new CsvError(`line ${start}: a quoted field is never closed`)
        const value = text.slice(i + 1, close).replaceAll('""', '"')
        line += countLines(text, i + 1, close)
        i = close + 1
        // Text after the closing quote up to the delimiter is kept as some banks write it (`"12,5"0`).
        let end = i
        for (let c = text.charCodeAt(end); end < n && c !== sep && c !== LF && c !== CR; c = text.charCodeAt(++end));
        cell = end > i ? value + text.slice(i, end) : value
        i = end
        blank = false
      } else {
        let end = i
        for (let c = text.charCodeAt(end); end < n && c !== sep && c !== LF && c !== CR; c = text.charCodeAt(++end));
        cell = text.slice(i, end)
        if (blank && cell.trim() !== '') blank = false
        i = end
      }
      cells.push(cell)
      if (cells.length > limits.maxFields) throw new CsvError(`line ${start}: more than ${limits.maxFields} fields in one row`)
      const c = text.charCodeAt(i)
      if (c === sep && i < n) {
        i++
        blank = false
        continue
      }
      if (c === CR) i += text.charCodeAt(i + 1) === LF ? 2 : 1
      else if (c === LF) i++
      line++
      break
    }
    if (!blank) records.push({ line: start, cells })
  }
  return { records, truncated: false }
}

const CANDIDATES = [',', ';', '\t', '|'] as const

/**
 * The delimiter of a file without a preset: of `,` `;` tab `|`, the one that splits the most of
 * the first records into the same number (≥ 2) of fields, then the one that gives more fields.
 * Bank files often open with lines of their own (account, period) before the header.
 */
export function detectDelimiter(text: string): string {
  // The first 64 KiB say it: the header and a few rows are there, and no hostile file costs more than that much reading.
  const sample = text.slice(0, 64 * 1024)
  let best: { delimiter: string; rows: number; fields: number } = { delimiter: ',', rows: 0, fields: 0 }
  for (const delimiter of CANDIDATES) {
    let records: CsvRecord[]
    try {
      records = csvRecords(sample, delimiter, { maxRecords: 30, maxFields: 1000, sample: true }).records
    } catch {
      continue
    }
    const counts = new Map<number, number>()
    for (const record of records) if (record.cells.length > 1) counts.set(record.cells.length, (counts.get(record.cells.length) ?? 0) + 1)
    for (const [fields, rows] of counts) {
      if (rows > best.rows || (rows === best.rows && fields > best.fields)) best = { delimiter, rows, fields }
    }
  }
  return best.delimiter
}
