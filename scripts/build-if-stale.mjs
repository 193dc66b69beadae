/**
 * tap's `before` script (package.json "tap".before): the CLI, docs and fake-provider tests run the
 * build (dist-bundle/cli.mjs, dist/), so a single test file run with `npx tap` must not meet a
 * missing or stale one. Builds when any source is newer than the build; `npm test` has just built,
 * so there this is a quick look at mtimes.
 * tap measures the coverage of its `before` script even with coverage disabled, and fails a run
 * that is not fully covered: the c8 comments take this tooling out of that count.
 */
/* c8 ignore start */
import { execFileSync } from 'node:child_process'
import { readdirSync, statSync } from 'node:fs'
import { join } from 'node:path'

const BUILT = ['dist-bundle/cli.mjs', 'dist/cli.js', 'dist/fake-provider/cli.js', 'dist/demo.js']
const SOURCES = ['src', 'scripts/bundle.mjs', 'scripts/undici-dispatchers.cjs', 'tsconfig.json', 'tsconfig.build.json', 'package-lock.json']

function newest (path) {
  const stat = statSync(path)
  if (!stat.isDirectory()) return stat.mtimeMs
  return Math.max(0, ...readdirSync(path).map((name) => newest(join(path, name))))
}

function oldestBuilt () {
  try {
    return Math.min(...BUILT.map((path) => statSync(path).mtimeMs))
  } catch {
    return -Infinity
  }
}

if (oldestBuilt() < Math.max(...SOURCES.map(newest))) {
  process.stderr.write('build-if-stale: the build is missing or older than the sources; running npm run build\n')
  // Through env(1): tap adds its process-info and coverage hooks to NODE_OPTIONS at every spawn, and
  // the build's own node processes must run without them.
  execFileSync('env', ['-u', 'NODE_OPTIONS', 'npm', 'run', '--silent', 'build'], { stdio: ['ignore', 2, 2] })
}
/* c8 ignore stop */
