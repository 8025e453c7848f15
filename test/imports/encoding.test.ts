import { expect, test } from 'bun:test'
import { decodeFile, encodingName } from '../../src/modules/imports/encoding.ts'

/** A statement's bytes as text (CONTRACT §24): BOM, the caller's encoding, the file's own declaration, else UTF-8 with windows-1252 as the fallback. */

const bytes = (...parts: (string | number[])[]) =>
  new Uint8Array(parts.flatMap((part) => (typeof part === 'string' ? [...new TextEncoder().encode(part)] : part)))

test('a UTF-8 BOM is stripped', () => {
  expect(decodeFile(bytes([0xef, 0xbb, 0xbf], 'Date;Betrag'))).toEqual({ text: 'Date;Betrag', encoding: 'utf-8', guessed: false })
})

test('a UTF-16 BOM decides the encoding', () => {
  const utf16 = new Uint8Array([0xff, 0xfe, ...[...'Café'].flatMap((c) => [c.charCodeAt(0), 0])])
  expect(decodeFile(utf16)).toEqual({ text: 'Café', encoding: 'utf-16le', guessed: false })
})

test('windows-1252 bytes that are not UTF-8: € and é read through the fallback, marked as guessed', () => {
  const file = bytes('Caf', [0xe9], ';', [0x80], '12,50')
  expect(decodeFile(file)).toEqual({ text: 'Café;€12,50', encoding: 'windows-1252', guessed: true })
})

test('OFX 1.x CHARSET:1252 is honoured, even where the bytes would also be UTF-8', () => {
  // "Ã©" in windows-1252 is the two bytes of "é" in UTF-8: the declaration decides.
  const file = bytes('OFXHEADER:100\r\nENCODING:USASCII\r\nCHARSET:1252\r\n\r\n<OFX><NAME>', [0xc3, 0xa9], '</OFX>')
  const read = decodeFile(file)
  expect(read.encoding).toBe('windows-1252')
  expect(read.guessed).toBe(false)
  expect(read.text).toContain('<NAME>Ã©')
})

test('OFX ENCODING:UTF-8 wins over CHARSET', () => {
  const read = decodeFile(bytes('OFXHEADER:100\nENCODING:UTF-8\nCHARSET:1252\n<OFX><NAME>', [0xc3, 0xa9], '</OFX>'))
  expect(read).toMatchObject({ encoding: 'utf-8', guessed: false })
  expect(read.text).toContain('<NAME>é')
})

test('an XML encoding declaration is honoured', () => {
  const read = decodeFile(bytes('<?xml version="1.0" encoding="ISO-8859-1"?><Document><Nm>M', [0xfc], 'nchen</Nm></Document>'))
  expect(read.encoding).toBe('windows-1252')
  expect(read.text).toContain('München')
})

test('the caller’s encoding wins over a declaration; a UTF-8 file that is not UTF-8 is an error, not a guess', () => {
  expect(decodeFile(bytes('a', [0xe9]), 'latin1').text).toBe('aé')
  expect(() => decodeFile(bytes('<?xml version="1.0" encoding="UTF-8"?><a>', [0xe9], '</a>'))).toThrow('not valid utf-8')
  expect(encodingName('latin1')).toBe('windows-1252')
  expect(encodingName('klingon')).toBeNull()
})
