/**
 * 4 MiB statement files built to make a parser work hard (CONTRACT §14, §24): the shapes that
 * blow up known readers (ofx-js's nested quantifier on a tag name, csv-parse's per-field cost,
 * fast-xml-parser on many elements), repetitions that make a quadratic scan visible, and
 * unclosed structures. Shared by the parser test, the server test and the import benchmark.
 */

export const HOSTILE_BYTES = 4 * 1024 * 1024

/** `unit` repeated to fill 4 MiB between `head` and `tail`. */
export function fill(unit: string, head = '', tail = ''): string {
  const room = HOSTILE_BYTES - head.length - tail.length
  return head + unit.repeat(Math.max(0, Math.floor(room / unit.length))) + tail
}

const ofxHead =
  'OFXHEADER:100\r\nDATA:OFXSGML\r\nVERSION:102\r\nCHARSET:1252\r\n\r\n<OFX><BANKMSGSRSV1><STMTTRNRS><STMTRS><CURDEF>EUR<BANKACCTFROM><ACCTID>1</BANKACCTFROM><BANKTRANLIST>'
const camtHead = '<?xml version="1.0" encoding="UTF-8"?><Document><BkToCstmrStmt><Stmt><Acct><Id><IBAN>DE1</IBAN></Id></Acct>'

export const HOSTILE: Record<'csv' | 'ofx' | 'qif' | 'camt053', [string, string][]> = {
  csv: [
    ['one row of empty fields', fill(',', 'Date,Amount\n')],
    ['doubled quotes', fill('"', 'Date,Amount\n')],
    ['one quoted field of 4 MiB', fill('a', 'Date,Amount\n"', '"\n')],
    ['quoted fields holding newlines', fill('"a\n",', 'Date,Amount\n')],
    ['blank lines', fill('\n', 'Date,Amount\n')],
    ['rows past the limit', fill('2026-01-15,-3.20\n', 'Date,Amount\n')],
    ['a header of long names', fill('x', 'Date,Amount,', '\n2026-01-15,1\n')],
    ['amount cells of 64 KiB', fill(`2026-01-15,${'9'.repeat(65536)}\n`, 'Date,Amount\n')],
  ],
  ofx: [
    ['a 30-character tag name (ofx-js: 4× per 2 characters)', fill(`<${'A'.repeat(30)}>x\r\n`, ofxHead)],
    ['one tag name of 4 MiB', fill('A', `${ofxHead}<`, '>1')],
    ['transactions past the limit', fill('<STMTTRN><TRNTYPE>DEBIT<DTPOSTED>20260115<TRNAMT>-1.00<FITID>1<NAME>X</STMTTRN>', ofxHead)],
    ['nested aggregates', fill('<STMTTRN>', ofxHead)],
    ['end tags of nothing', fill('</X>', ofxHead)],
    ['empty leaves', fill('<MEMO>', `${ofxHead}<STMTTRN>`)],
    ['entities', fill('&amp;', `${ofxHead}<STMTTRN><NAME>`)],
    ['unclosed <', fill('<', ofxHead)],
  ],
  qif: [
    ['records past the limit', fill('D1/15/26\nT-1.00\n^\n', '!Type:Bank\n')],
    ['one record of endless fields', fill('PPayee\n', '!Type:Bank\nD1/15/26\nT-1\n')],
    ['empty lines', fill('\n', '!Type:Bank\n')],
    ['one line of 4 MiB', fill('P', '!Type:Bank\nD1/15/26\nT-1\n', '\n^\n')],
    ['type switches', fill('!Type:Bank\n!Account\n')],
  ],
  camt053: [
    ['sibling elements', fill('<a/>', camtHead, '</Stmt></BkToCstmrStmt></Document>')],
    [
      'entries past the limit',
      fill(
        '<Ntry><Amt Ccy="EUR">1.00</Amt><CdtDbtInd>DBIT</CdtDbtInd><BookgDt><Dt>2026-01-15</Dt></BookgDt></Ntry>',
        camtHead,
        '</Stmt></BkToCstmrStmt></Document>',
      ),
    ],
    ['deep nesting', fill('<a>', camtHead)],
    ['nesting just under the limit, repeated', `${camtHead}${`${'<a>'.repeat(30)}${'</a>'.repeat(30)}`.repeat(20_000)}</Stmt></BkToCstmrStmt></Document>`],
    ['attributes', fill(' a="1"', `${camtHead}<Ntry`, '/></Stmt></BkToCstmrStmt></Document>')],
    ['an attribute name of 4 MiB', fill('x', `${camtHead}<Ntry `, '="1"/></Stmt></BkToCstmrStmt></Document>')],
    ['entities', fill('&amp;&#233;', `${camtHead}<Ntry><AddtlNtryInf>`, '</AddtlNtryInf></Ntry></Stmt></BkToCstmrStmt></Document>')],
    ['a DOCTYPE with entities', fill('<!ENTITY a "aaaaaaaaaa">', '<?xml version="1.0"?><!DOCTYPE Document [', ']><Document/>')],
    ['an unclosed comment', fill('-', `${camtHead}<!--`)],
  ],
}
