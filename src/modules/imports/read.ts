import { type DecodedFile, decodeFile } from './encoding.ts'
import { readCamt053 } from './formats/camt053.ts'
import { type CsvLayout, readCsv } from './formats/csv.ts'
import { detectFormat } from './formats/detect.ts'
import { readOfx } from './formats/ofx.ts'
import { readQif } from './formats/qif.ts'
import type { ImportFormat, ParsedFile } from './formats/types.ts'

/**
 * A statement file from its bytes (CONTRACT §24): decoded, its format detected unless named,
 * read by that format's reader. Throws EncodingError, FormatError or TooManyRowsError.
 */
export interface ReadFileOptions {
  format: ImportFormat | 'auto'
  /** A WHATWG encoding name, already checked. */
  encoding?: string
  csv: CsvLayout
}

export interface ReadFile {
  decoded: DecodedFile
  file: ParsedFile
}

export function readStatementFile(bytes: Uint8Array, options: ReadFileOptions): ReadFile {
  const decoded = decodeFile(bytes, options.encoding)
  const format = options.format === 'auto' ? detectFormat(decoded.text) : options.format
  return { decoded, file: readAs(format, decoded.text, options.csv) }
}

function readAs(format: ImportFormat, text: string, csv: CsvLayout): ParsedFile {
  switch (format) {
    case 'ofx':
    case 'qfx':
      return readOfx(text, format === 'qfx' || /<INTU\.BID>/i.test(text))
    case 'camt053':
      return readCamt053(text)
    case 'qif':
      return readQif(text)
    case 'csv':
      return readCsv(text, csv)
  }
}
