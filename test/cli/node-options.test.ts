import t from 'tap'
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { runNpmStart } from '../helpers/child-proxy.js'
import { providerEnv, startProvider } from '../helpers/harness.js'

const root = new URL('../../', import.meta.url)

// The young-generation cap halves peak RSS under load and lowers CPU per request on large
// responses; the fixed old-generation growth keeps a memory-limited container from collecting
// continuously (docs/performance.md, Memory). npm start and the image must run with the same
// options: the image carries the first in NODE_OPTIONS, the second (refused there) in its ENTRYPOINT.
t.test('npm start and the Docker image give Node the same options', async (t) => {
  const pkg = JSON.parse(readFileSync(new URL('package.json', root), 'utf8')) as { scripts: { start: string } }
  const startOptions = pkg.scripts.start.split(/\s+/).filter((arg) => arg.startsWith('--'))
  const dockerfile = readFileSync(new URL('Dockerfile', root), 'utf8')
  // The ENV instruction's continuation line, not a comment that mentions the variable.
  const envOptions = dockerfile.match(/^[ \t]+NODE_OPTIONS="?([^"\n\\]*)/m)?.[1]?.trim().split(/\s+/) ?? []
  const entrypoint = JSON.parse(dockerfile.match(/^ENTRYPOINT (\[.*\])$/m)?.[1] ?? '[]') as string[]
  const entrypointOptions = entrypoint.filter((arg) => arg.startsWith('--'))
  t.same(startOptions, ['--max-semi-space-size=8', '--heap-growing-percent=100'])
  t.same([...envOptions, ...entrypointOptions], startOptions)
  // The image runs the bundle npm start runs (scripts/bundle.mjs), copied to dist/.
  t.same(entrypoint.filter((arg) => !arg.startsWith('--')), ['node', 'dist/cli.mjs'])
})

// One malloc arena instead of one per allocating thread: the peak RSS budget on Node 24; glibc's
// mmap threshold held at its start, so memory V8 frees after compiling goes back; the compile cache
// for later starts (docs/performance.md, Memory). An operator's own value wins.
t.test('npm start runs the proxy with its malloc settings and compile cache unless the environment sets them', { skip: process.platform !== 'linux' && 'reads /proc' }, async (t) => {
  const provider = await startProvider(t)
  const cache = mkdtempSync(join(tmpdir(), 'compile-cache-'))
  const defaults = { MALLOC_ARENA_MAX: '1', MALLOC_MMAP_THRESHOLD_: '131072', NODE_COMPILE_CACHE: 'node_modules/.cache/node-compile-cache' }
  const given = { MALLOC_ARENA_MAX: '4', MALLOC_MMAP_THRESHOLD_: '262144', NODE_COMPILE_CACHE: cache }
  for (const [set, expected] of [[{}, defaults], [given, given]] as const) {
    const child = runNpmStart(t, providerEnv(provider, set))
    await child.waitFor(/ready to accept requests/, 20_000)
    const environ = readFileSync(`/proc/${listenerPid(child.process.pid ?? 0)}/environ`, 'latin1').split('\0')
    for (const [name, value] of Object.entries(expected)) t.equal(environ.find((entry) => entry.startsWith(`${name}=`)), `${name}=${value}`, `${name}, given ${JSON.stringify(set)}`)
    child.process.kill('SIGTERM')
    await child.exited
  }
  t.ok(readdirSync(cache).length > 0, 'Node wrote its compile cache where it was told')
})

t.test('the Docker image sets the same malloc settings', async (t) => {
  const dockerfile = readFileSync(new URL('Dockerfile', root), 'utf8')
  t.match(dockerfile, /^ENV (?:[^\n]*\\\n)*\s*MALLOC_ARENA_MAX=1\b/m)
  t.match(dockerfile, /^ENV (?:[^\n]*\\\n)*\s*MALLOC_MMAP_THRESHOLD_=131072\b/m)
})

/** The node process under npm: the descendant of `pid` whose command line runs the bundle. */
function listenerPid (pid: number): number {
  const children = readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number)
  for (const child of children) {
    if (readFileSync(`/proc/${child}/cmdline`, 'utf8').includes('dist-bundle/cli.mjs')) return child
    const found = listenerPid(child)
    if (found !== 0) return found
  }
  return 0
}
