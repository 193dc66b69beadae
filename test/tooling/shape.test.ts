/**
 * The shape issue 57 asks for, read from the imports of src/ (static `from '…'` and dynamic
 * `import('…')`): the root files reach an optional capability only through features/index.ts, and
 * a package is a runtime dependency only when src/ imports it.
 */
import { readdirSync, readFileSync } from 'node:fs'
import { join, relative } from 'node:path'
import t from 'tap'

const ROOT = new URL('../../', import.meta.url).pathname
const SRC = join(ROOT, 'src')
const FEATURE_FOLDERS = ['webhooks', 'approvals', 'payments', 'mcp', 'console']

/** The files that start and wire the process: each goes through the features list and names none. */
const ROOT_FILES = ['cli.ts', 'server.ts', 'check.ts', 'load-config.ts', 'process/commands.ts', 'process/serve.ts', 'process/reload.ts', 'process/shutdown.ts', 'process/exit.ts']

function sources (dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name)
    if (entry.isDirectory()) return sources(path)
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts') ? [path] : []
  })
}

const SPECIFIER = /(?:\bfrom\s*|\bimport\s*\(\s*|^import\s+)['"]([^'"]+)['"]/gm

function specifiers (file: string): string[] {
  return [...readFileSync(file, 'utf8').matchAll(SPECIFIER)].map((m) => m[1] ?? '')
}

t.test('the root files name no feature folder, and each stays short', async (t) => {
  for (const root of ROOT_FILES) {
    const file = join(SRC, root)
    const named = new Set<string>()
    for (const specifier of specifiers(file)) {
      if (!specifier.startsWith('.')) continue
      const target = relative(SRC, join(file, '..', specifier)).split('/')
      if (target.length > 1 && FEATURE_FOLDERS.includes(target[0] ?? '')) named.add(target[0] ?? '')
    }
    t.same([...named], [], `${root} names ${[...named].join(', ') || 'no feature'}`)
    // A root file that grows is a capability being wired in by hand again (issue 57).
    const lines = readFileSync(file, 'utf8').match(/\n/g)?.length ?? 0
    t.ok(lines <= 150, `${root} is at most 150 lines (${lines})`)
  }
})

/**
 * What two features use lives in a room of its own, or is handed over in the provider's shared
 * part (feature/feature.ts SharedParts): a feature never imports another's files.
 */
t.test('a feature imports no other feature\'s files', async (t) => {
  const crossings = new Set<string>()
  for (const folder of FEATURE_FOLDERS) {
    for (const file of sources(join(SRC, folder))) {
      for (const specifier of specifiers(file)) {
        if (!specifier.startsWith('.')) continue
        const target = relative(SRC, join(file, '..', specifier)).replace(/\.js$/, '.ts')
        const [room] = target.split('/')
        if (room !== undefined && room !== folder && FEATURE_FOLDERS.includes(room)) crossings.add(`${folder} -> ${target}`)
      }
    }
  }
  t.same([...crossings].sort(), [])
})

t.test('every runtime dependency is imported by src/', async (t) => {
  const { dependencies } = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { dependencies: Record<string, string> }
  const imported = new Set(sources(SRC).flatMap(specifiers).filter((s) => !s.startsWith('.') && !s.startsWith('node:'))
    .map((s) => s.startsWith('@') ? s.split('/').slice(0, 2).join('/') : s.split('/')[0] ?? s))
  for (const name of Object.keys(dependencies)) t.ok(imported.has(name), `${name} is imported by src/`)
})
