/**
 * Issue 43 item 15: `npm test` reports as it goes. scripts/tap.sh, run without a terminal (CI, a
 * log file), writes a line per test file as it finishes (PASS or FAIL, counts, time) while others
 * still run, keeps every failure's detail (diff, source, stack), and exits with tap's code. It runs
 * here on fixtures (test/tooling/fixtures/, not part of the suite), in a tap of its own.
 */
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import t, { type Test } from 'tap'
import { eventually } from '../helpers/eventually.js'

const ROOT = fileURLToPath(new URL('../../', import.meta.url))
const FIXTURES = 'test/tooling/fixtures'

interface Run { output: () => string, exited: Promise<number | null>, running: () => boolean }

/**
 * A project of its own beside the suite's, with the suite's tap settings, reporter script, fixtures
 * and node_modules: tap keeps its run's state in the project's `.tap/`, which the suite's own run,
 * with its jobs in parallel, is using at the same time.
 */
function fixtureProject (t: Test): string {
  const dir = mkdtempSync(join(tmpdir(), 'pap-tap-project-'))
  t.teardown(() => { rmSync(dir, { recursive: true, force: true }) })
  const manifest = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { tap: Record<string, unknown> }
  const tap = { ...manifest.tap }
  // Not the suite's build step: the fixtures need no build.
  delete tap['before']
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'tap-report-fixtures', private: true, type: 'module', tap }))
  symlinkSync(join(ROOT, 'node_modules'), join(dir, 'node_modules'))
  mkdirSync(join(dir, 'scripts'))
  cpSync(join(ROOT, 'scripts/tap.sh'), join(dir, 'scripts/tap.sh'))
  cpSync(join(ROOT, FIXTURES), join(dir, FIXTURES), { recursive: true })
  return dir
}

function tapSh (t: Test, files: string[], env: Record<string, string> = {}): Run {
  // Only what a shell would have: tap's own variables would make this run report as a child of the suite's.
  const child = spawn('bash', ['scripts/tap.sh', ...files.map((file) => `${FIXTURES}/${file}`)], {
    cwd: fixtureProject(t), stdio: ['ignore', 'pipe', 'pipe'], env: { PATH: process.env['PATH'] ?? '', HOME: process.env['HOME'] ?? '', ...env },
  })
  let output = ''
  child.stdout.on('data', (chunk: Buffer) => { output += chunk.toString('utf8') })
  child.stderr.on('data', (chunk: Buffer) => { output += chunk.toString('utf8') })
  const exited = once(child, 'exit').then(([code]) => code as number | null)
  t.teardown(() => { if (child.exitCode === null) child.kill('SIGKILL') })
  return { output: () => output, exited, running: () => child.exitCode === null }
}

t.test('without a terminal, each file\'s line is written when it finishes, while others still run', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'pap-tap-report-'))
  t.teardown(() => { rmSync(dir, { recursive: true, force: true }) })
  const release = join(dir, 'release')
  const run = tapSh(t, ['passes.fixture.ts', 'waits.fixture.ts'], { RELEASE_FILE: release })
  const passed = new RegExp(` PASS  ${FIXTURES}/passes\\.fixture\\.ts 2 OK \\d+(\\.\\d+)?m?s\\n`)
  // The other file waits for the release file whatever this takes: a loaded machine (two test runs at
  // once) took over 30 s to start the nested run.
  await eventually(() => passed.test(run.output()), { what: 'the first file\'s line', timeoutMs: 120_000, detail: run.output })
  t.ok(run.running(), 'written while the other file still runs')
  t.notMatch(run.output(), /waits\.fixture/, 'nothing yet of the file still running')
  writeFileSync(release, '')
  t.equal(await run.exited, 0, run.output())
  t.match(run.output(), new RegExp(` PASS  ${FIXTURES}/waits\\.fixture\\.ts 1 OK `))
  t.match(run.output(), /Suites: +2 pass +0 fail +2 of 2 complete/)
  const escapes = run.output().split(String.fromCharCode(27)).slice(1)
  t.notOk(escapes.some((after) => /^\[\d*[ABJK]/.test(after)), 'no cursor movement or erasing in a log')
})

t.test('a failure keeps its diff, source and stack, and the exit code is tap\'s', async (t) => {
  const run = tapSh(t, ['passes.fixture.ts', 'fails.fixture.ts'])
  t.equal(await run.exited, 1, run.output())
  const output = run.output()
  t.match(output, new RegExp(` FAIL  ${FIXTURES}/fails\\.fixture\\.ts 1 failed of 2 `))
  t.match(output, /compares two payouts > the payout as sent/)
  t.match(output, /-\s+"amount": "900",\n\s+\+\s+"amount": "100",/, 'the diff')
  t.match(output, /t\.same\(\{ amount: '100', currency: 'KES' \}/, 'the source line')
  t.match(output, /fails\.fixture\.ts:4:5/, 'the stack')
  t.match(output, /Suites: +1 pass +1 fail +2 of 2 complete/)
})
