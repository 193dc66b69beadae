import t from 'tap'
import { readFileSync } from 'node:fs'

const root = new URL('../../', import.meta.url)

// The young-generation cap halves peak RSS under load and lowers CPU per request on large
// responses; the fixed old-generation growth keeps a memory-limited container from collecting
// continuously (README, Performance: Memory). npm start and the image must run with the same
// options: the image carries the first in NODE_OPTIONS, the second (refused there) in its ENTRYPOINT.
t.test('npm start and the Docker image give Node the same options', async (t) => {
  const pkg = JSON.parse(readFileSync(new URL('package.json', root), 'utf8')) as { scripts: { start: string } }
  const startOptions = pkg.scripts.start.split(/\s+/).filter((arg) => arg.startsWith('--'))
  const dockerfile = readFileSync(new URL('Dockerfile', root), 'utf8')
  const envOptions = dockerfile.match(/NODE_OPTIONS="?([^"\n\\]*)/)?.[1]?.trim().split(/\s+/) ?? []
  const entrypoint = JSON.parse(dockerfile.match(/^ENTRYPOINT (\[.*\])$/m)?.[1] ?? '[]') as string[]
  const entrypointOptions = entrypoint.filter((arg) => arg.startsWith('--'))
  t.same(startOptions, ['--max-semi-space-size=8', '--heap-growing-percent=100'])
  t.same([...envOptions, ...entrypointOptions], startOptions)
  t.same(entrypoint.filter((arg) => !arg.startsWith('--')), ['node', 'dist/cli.js'])
})
