import { expect, test } from 'bun:test'
import { detectDateOrder, parseDateFormat, patternOf, readDate } from '../../src/modules/imports/dates.ts'

/** One date format per file, tried over all rows (CONTRACT §24): every order, ambiguity, QIF's apostrophe years. */

test.each([
  ['2026-01-15', 'YMD', '2026-01-15'],
  ['20260115', 'YMD', '2026-01-15'],
  ['2026-01-15T10:22:00+01:00', 'YMD', '2026-01-15'],
  ['15.01.2026', 'DMY', '2026-01-15'],
  ['15.01.26', 'DMY', '2026-01-15'],
  ['15.01.2026 10:22', 'DMY', '2026-01-15'],
  ['01/15/2026', 'MDY', '2026-01-15'],
  ['1/5/2026', 'MDY', '2026-01-05'],
  ["6/ 4'18", 'MDY', '2018-06-04'],
  ["12/31'99", 'MDY', '2099-12-31'],
  ['6/ 4/98', 'MDY', '1998-06-04'],
  ['29.02.2024', 'DMY', '2024-02-29'],
] as const)('%p read as %p is %p', (text, order, expected) => {
  expect(readDate(text, order)).toBe(expected)
})

test.each([
  ['29.02.2025', 'DMY'],
  ['31/04/2026', 'DMY'],
  ['13/01/2026', 'MDY'],
  ['2026-13-01', 'YMD'],
  ['15.01.2026', 'YMD'],
  ['Saldo', 'DMY'],
  ['1/2/3', 'DMY'],
] as const)('%p is no date in %p', (text, order) => {
  expect(readDate(text, order)).toBeNull()
})

test('DD/MM with a 13th: only day-first reads every row, so the file is read day-first throughout', () => {
  const rows = ['01/02/2026', '05/03/2026', '13/03/2026', '07/04/2026']
  const found = detectDateOrder(rows, ['MDY', 'DMY', 'YMD'])
  expect(found).toEqual({ survivors: ['DMY'], chosen: 'DMY', ambiguous: false })
  expect(rows.map((row) => readDate(row, found.chosen))).toEqual(['2026-02-01', '2026-03-05', '2026-03-13', '2026-04-07'])
})

test('every day ≤ 12: both orders read every row, which is ambiguous; the owner’s usual order is tried first', () => {
  const rows = ['01/02/2026', '05/03/2026', '12/11/2026']
  expect(detectDateOrder(rows, ['DMY', 'MDY', 'YMD'])).toEqual({ survivors: ['DMY', 'MDY'], chosen: 'DMY', ambiguous: true })
  expect(detectDateOrder(rows, ['MDY', 'DMY', 'YMD'])).toEqual({ survivors: ['MDY', 'DMY'], chosen: 'MDY', ambiguous: true })
})

test('no order reads every row: the one that reads the most is used and the others fail', () => {
  expect(detectDateOrder(['15.01.2026', '2026-01-16', '17.01.2026'], ['DMY', 'MDY', 'YMD'])).toEqual({ survivors: [], chosen: 'DMY', ambiguous: false })
})

test('dateFormat patterns', () => {
  expect(parseDateFormat('DD/MM/YYYY')).toEqual({ order: 'DMY', pattern: 'DD/MM/YYYY' })
  expect(parseDateFormat('mm-dd-yy')?.order).toBe('MDY')
  expect(parseDateFormat('YYYYMMDD')?.order).toBe('YMD')
  expect(parseDateFormat("MM/DD'YY")?.order).toBe('MDY')
  for (const bad of ['DD/DD/YYYY', 'YYYY', 'D/M', 'DD/MM/YYY', 'dd/mm/yyyy hh:mm', '']) expect(parseDateFormat(bad)).toBeNull()
  expect(patternOf('DMY', '15.01.2026')).toBe('DD.MM.YYYY')
  expect(patternOf('MDY', "6/ 4'18")).toBe("MM/DD'YY")
  expect(patternOf('YMD', '20260115')).toBe('YYYYMMDD')
})
