/**
 * Issue 56 item 7: `npm run demo` builds only when the build is missing or older than its sources
 * (scripts/build-if-stale.mjs, the check tap's `before` runs too), says why and how long it took
 * when it does, and says and touches nothing when the build is fresh. The script runs in a fixture
 * tree with an `npm` of its own on PATH, not in the checkout: a stale checkout would be rebuilt
 * under the feet of the tests running beside this one, and a real build takes a minute.
 */
import { spawnSync } from 'node:child_process'
import { chmodSync, existsSync, mkdirSync, readFileSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import t, { type Test } from 'tap'
import { tempDir } from '../helpers/temp-dir.js'

const ROOT = fileURLToPath(new URL('../../', import.meta.url))
const SCRIPT = join(ROOT, 'scripts', 'build-if-stale.mjs')
const SOURCES = ['src/cli.ts', 'src/webhooks/inbox.ts', 'scripts/bundle.mjs', 'scripts/undici-dispatchers.cjs', 'tsconfig.json', 'tsconfig.build.json', 'package-lock.json']
const BUILT = ['dist-bundle/cli.mjs', 'dist/cli.js', 'dist/fake-provider/cli.js', 'dist/demo.js']
const NOW_S = Math.floor(Date.now() / 1000)
const BUILT_AT_S = NOW_S - 500

/** The build's sources written 1000 s ago and its outputs 500 s ago (dist/cli.js, the oldest, 600 s). */
function tree (t: Test): string {
  const dir = tempDir(t)
  for (const [path, atS] of [...SOURCES.map((p) => [p, NOW_S - 1000] as const), ...BUILT.map((p) => [p, p === 'dist/cli.js' ? BUILT_AT_S - 100 : BUILT_AT_S] as const)]) {
    mkdirSync(join(dir, dirname(path)), { recursive: true })
    writeFileSync(join(dir, path), '')
    utimesSync(join(dir, path), atS, atS)
  }
  // The build stands in for `npm run build`: records how it was called and writes every output.
  mkdirSync(join(dir, 'bin'))
  writeFileSync(join(dir, 'bin', 'npm'), [
    '#!/bin/sh',
    'echo "$* NODE_OPTIONS=${NODE_OPTIONS-unset}" >>npm-calls',
    '[ -z "$FAIL_BUILD" ] || exit 3',
    `mkdir -p ${BUILT.map(dirname).join(' ')} && touch ${BUILT.join(' ')}`,
    '',
  ].join('\n'))
  chmodSync(join(dir, 'bin', 'npm'), 0o755)
  return dir
}

function buildIfStale (dir: string, env: Record<string, string> = {}): { status: number | null, lines: string[], npmCalls: string[] } {
  const run = spawnSync(process.execPath, [SCRIPT], {
    cwd: dir,
    encoding: 'utf8',
    env: { PATH: `${join(dir, 'bin')}:${process.env['PATH'] ?? ''}`, NODE_OPTIONS: '--no-deprecation', ...env },
  })
  const calls = join(dir, 'npm-calls')
  return {
    status: run.status,
    lines: (run.stdout + run.stderr).split('\n').filter((l) => l !== ''),
    npmCalls: existsSync(calls) ? readFileSync(calls, 'utf8').trim().split('\n') : [],
  }
}

const mtimes = (dir: string): number[] => BUILT.map((p) => statSync(join(dir, p)).mtimeMs)

t.test('npm run demo builds through the one stale check that tap\'s before script runs', async (t) => {
  const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string>, tap: { before: string } }
  t.equal(pkg.scripts['demo'], '. scripts/use-supported-node.sh && node scripts/build-if-stale.mjs && node dist/demo.js')
  t.equal(pkg.tap.before, 'scripts/build-if-stale.mjs')
})

t.test('a fresh build: nothing built, nothing said, no output touched', async (t) => {
  const dir = tree(t)
  const before = mtimes(dir)
  const run = buildIfStale(dir)
  t.equal(run.status, 0)
  t.same(run.lines, [])
  t.same(run.npmCalls, [], 'npm run build not run')
  t.same(mtimes(dir), before, 'the outputs\' mtimes unchanged')
})

t.test('a stale or missing build: built once, saying why first and how long it took after', async (t) => {
  for (const [what, change, reason] of [
    ['a source edited after the build', (dir: string) => { utimesSync(join(dir, 'src/webhooks/inbox.ts'), NOW_S - 100, NOW_S - 100) }, 'src/webhooks/inbox.ts is newer than dist/cli.js'],
    ['a source newer than the oldest output only', (dir: string) => { utimesSync(join(dir, 'src/cli.ts'), BUILT_AT_S - 50, BUILT_AT_S - 50) }, 'src/cli.ts is newer than dist/cli.js'],
    ['the lockfile changed (npm ci of other versions)', (dir: string) => { utimesSync(join(dir, 'package-lock.json'), NOW_S - 100, NOW_S - 100) }, 'package-lock.json is newer than dist/cli.js'],
    ['a fresh clone: no build at all', (dir: string) => { for (const p of BUILT) rmSync(join(dir, p)) }, 'dist-bundle/cli.mjs is missing'],
  ] as const) {
    const dir = tree(t)
    change(dir)
    const run = buildIfStale(dir)
    t.equal(run.status, 0, what)
    t.same(run.npmCalls, ['run --silent build NODE_OPTIONS=unset'], `${what}: built once, without the caller's NODE_OPTIONS`)
    t.equal(run.lines[0], `build-if-stale: building (npm run build), as ${reason}; about a minute on a busy machine`, what)
    t.match(run.lines[1], /^build-if-stale: built in \d+\.\d s$/, what)
    t.equal(run.lines.length, 2, what)
    t.same(buildIfStale(dir).lines, [], `${what}: fresh after the build, so the next run builds nothing`)
  }
})

t.test('a failed build stops the demo with the build\'s status', async (t) => {
  const dir = tree(t)
  utimesSync(join(dir, 'src/cli.ts'), NOW_S, NOW_S)
  const run = buildIfStale(dir, { FAIL_BUILD: '1' })
  t.equal(run.status, 3)
  t.match(run.lines.at(-1), /^build-if-stale: the build failed after \d+\.\d s \(exit 3\)$/)
})
