/**
 * Runs `npm run build` only when the build is missing or older than its sources, saying why before
 * and how long it took after; a fresh build is a quick look at mtimes and says nothing. Two callers:
 * tap's `before` script (package.json "tap".before), so that a single test file run with `npm run
 * tap` never meets a missing or stale dist/ or dist-bundle/ (`npm test` has just built), and `npm run
 * demo`, which would otherwise sit silent through a build of about a minute on a busy machine every
 * time (issue 56 item 7). Paths are the working directory's: npm and tap run it in the project's.
 * tap measures the coverage of its `before` script even with coverage disabled, and fails a run
 * that is not fully covered: the c8 comments take this tooling out of that count.
 */
/* c8 ignore start */
import { spawnSync } from 'node:child_process'
import { readdirSync, statSync } from 'node:fs'
import { join } from 'node:path'

const BUILT = ['dist-bundle/cli.mjs', 'dist/cli.js', 'dist/fake-provider/cli.js', 'dist/demo.js']
const SOURCES = ['src', 'scripts/bundle.mjs', 'scripts/undici-dispatchers.cjs', 'tsconfig.json', 'tsconfig.build.json', 'package-lock.json']

/** The most recently modified file at or under `path`: { path, mtimeMs }. */
function newest (path) {
  const stat = statSync(path)
  if (!stat.isDirectory()) return { path, mtimeMs: stat.mtimeMs }
  return readdirSync(path).map((name) => newest(join(path, name))).reduce((a, b) => (b.mtimeMs > a.mtimeMs ? b : a), { path, mtimeMs: 0 })
}

/** Why the build must run (one phrase), or null when every output is newer than every source. */
function staleness () {
  const built = []
  for (const path of BUILT) {
    try {
      built.push({ path, mtimeMs: statSync(path).mtimeMs })
    } catch {
      return `${path} is missing`
    }
  }
  const oldest = built.reduce((a, b) => (b.mtimeMs < a.mtimeMs ? b : a))
  const source = SOURCES.map(newest).reduce((a, b) => (b.mtimeMs > a.mtimeMs ? b : a))
  return source.mtimeMs > oldest.mtimeMs ? `${source.path} is newer than ${oldest.path}` : null
}

const reason = staleness()
if (reason !== null) {
  process.stderr.write(`build-if-stale: building (npm run build), as ${reason}; about a minute on a busy machine\n`)
  const started = performance.now()
  // Through env(1): tap adds its process-info and coverage hooks to NODE_OPTIONS at every spawn, and
  // the build's own node processes must run without them.
  const result = spawnSync('env', ['-u', 'NODE_OPTIONS', 'npm', 'run', '--silent', 'build'], { stdio: ['ignore', 2, 2] })
  const took = `${((performance.now() - started) / 1000).toFixed(1)} s`
  if (result.status !== 0) {
    process.stderr.write(`build-if-stale: the build failed after ${took} (${result.error?.message ?? `exit ${result.status ?? result.signal}`})\n`)
    process.exit(result.status || 1)
  }
  process.stderr.write(`build-if-stale: built in ${took}\n`)
}
/* c8 ignore stop */
