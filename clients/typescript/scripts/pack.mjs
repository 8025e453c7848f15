// The package as a tarball (`npm pack`, `npm publish`): built to dist/ with tsc, its package.json
// pointed at dist for the packing, and put back after. A checkout's package.json points at the
// TypeScript sources, so `bun add ./clients/typescript` works with no build (Bun, Deno and
// bundlers read TypeScript); a tarball carries plain JavaScript and declarations for Node too.
//
//   node scripts/pack.mjs prepack    (npm runs it before packing)
//   node scripts/pack.mjs postpack   (and this after)
//
// Plain Node (>= 20), no dependencies: it runs wherever npm does. tsc is found on PATH, which npm
// extends with node_modules/.bin here and in every folder above (the repository's own).
import { execFileSync } from 'node:child_process'
import { existsSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

const root = join(dirname(fileURLToPath(import.meta.url)), '..')
const manifest = join(root, 'package.json')
const kept = join(root, '.package.json.checkout')

function prepack() {
  if (existsSync(kept)) throw new Error(`${kept} exists: a previous pack did not finish; put it back as package.json first`)
  rmSync(join(root, 'dist'), { recursive: true, force: true })
  execFileSync('tsc', ['-p', join(root, 'tsconfig.json')], { cwd: root, stdio: 'inherit', shell: process.platform === 'win32' })
  const pkg = JSON.parse(readFileSync(manifest, 'utf8'))
  renameSync(manifest, kept)
  const entry = { types: './dist/index.d.ts', import: './dist/index.js', default: './dist/index.js' }
  writeFileSync(manifest, `${JSON.stringify({ ...pkg, main: entry.import, types: entry.types, exports: { ...pkg.exports, '.': entry } }, null, 2)}\n`)
}

function postpack() {
  if (existsSync(kept)) renameSync(kept, manifest)
}

const step = process.argv[2]
if (step === 'prepack') prepack()
else if (step === 'postpack') postpack()
else throw new Error('usage: node scripts/pack.mjs prepack|postpack')
