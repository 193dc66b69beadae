import t from 'tap'
import { readFileSync } from 'node:fs'

const root = new URL('../../', import.meta.url)

// The young-generation cap halves peak RSS under load and lowers CPU per request on large
// responses (README, Performance: Memory); npm start and the image must run with the same one.
t.test('npm start and the Docker image give Node the same options', async (t) => {
  const pkg = JSON.parse(readFileSync(new URL('package.json', root), 'utf8')) as { scripts: { start: string } }
  const startOptions = pkg.scripts.start.split(/\s+/).filter((arg) => arg.startsWith('--'))
  const dockerfile = readFileSync(new URL('Dockerfile', root), 'utf8')
  const imageOptions = dockerfile.match(/NODE_OPTIONS="?([^"\n\\]*)/)?.[1]?.trim().split(/\s+/) ?? []
  t.same(startOptions, ['--max-semi-space-size=8'])
  t.same(imageOptions, startOptions)
})
