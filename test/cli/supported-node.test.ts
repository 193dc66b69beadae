/**
 * Issue 43 item 16: the project runs on Node 22 and 24. The CLI refuses an older Node in one line
 * (its SQLite driver would crash it), and the npm scripts that run the project's code source
 * scripts/use-supported-node.sh, which puts Node 24 (installed once into .node/24) first on PATH when
 * the machine's Node is older, and does nothing on a supported one.
 */
import { spawnSync } from 'node:child_process'
import { chmodSync, copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { delimiter, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import t, { type Test } from 'tap'
import { unsupportedNode } from '../../src/supported-node.js'
import { CLI } from '../helpers/child-proxy.js'

const ROOT = fileURLToPath(new URL('../../', import.meta.url))

t.test('Node 22 and later are supported; an older one is refused naming the versions to use', async (t) => {
  for (const version of ['22.0.0', '22.12.1', '24.21.0', '25.1.0']) t.equal(unsupportedNode(version), null, version)
  for (const version of ['20.20.2', '21.7.3', '18.0.0', 'v20.1.0']) {
    t.equal(unsupportedNode(version), `Node ${version} is not supported: run it on Node 22 or 24 (24 recommended)`, version)
  }
  t.not(unsupportedNode('not a version'), null, 'an unreadable version is not taken for a supported one')
})

/** A `node` older than 22 on PATH other than the one running the tests (the machine's, on a Node 20 machine). */
function olderNode (): string | undefined {
  for (const dir of (process.env['PATH'] ?? '').split(delimiter)) {
    const candidate = join(dir, 'node')
    if (!existsSync(candidate)) continue
    const version = spawnSync(candidate, ['--version'], { encoding: 'utf8' }).stdout.trim()
    if (/^v\d+\./.test(version) && unsupportedNode(version.slice(1)) !== null) return candidate
  }
  return undefined
}

const older = olderNode()
t.test('the CLI on an older Node prints one line and starts nothing', { skip: older === undefined && 'no Node older than 22 on this machine' }, async (t) => {
  const run = spawnSync(older ?? 'node', [CLI, 'check'], { encoding: 'utf8', env: { PATH: process.env['PATH'] } })
  t.equal(run.status, 1)
  t.match(run.stderr, /^payments-auth-proxy: Node \d+\.\d+\.\d+ is not supported: run it on Node 22 or 24 \(24 recommended\)\n$/)
  t.equal(run.stdout, '')
})

/** A directory holding the script, a stub `node` of the given version first on PATH, and optionally a stub .node/24. */
function sandbox (t: Test, machineNode: string, projectNode: boolean): { dir: string, run: () => ReturnType<typeof spawnSync> } {
  const dir = mkdtempSync(join(tmpdir(), 'pap-node-'))
  t.teardown(() => { rmSync(dir, { recursive: true, force: true }) })
  mkdirSync(join(dir, 'scripts'))
  copyFileSync(join(ROOT, 'scripts', 'use-supported-node.sh'), join(dir, 'scripts', 'use-supported-node.sh'))
  const stub = (path: string, version: string): void => {
    mkdirSync(join(path, '..'), { recursive: true })
    writeFileSync(path, `#!/bin/sh\n[ "$1" = --version ] && echo ${version}\n`)
    chmodSync(path, 0o755)
  }
  stub(join(dir, 'machine', 'node'), machineNode)
  // An npm that cannot install: the test never downloads anything.
  writeFileSync(join(dir, 'machine', 'npm'), '#!/bin/sh\necho "npm: offline" >&2\nexit 1\n')
  chmodSync(join(dir, 'machine', 'npm'), 0o755)
  if (projectNode) stub(join(dir, '.node', '24', 'bin', 'node'), 'v24.99.0')
  const run = (): ReturnType<typeof spawnSync> => spawnSync('/bin/sh', ['-c', '. scripts/use-supported-node.sh && command -v node'], {
    cwd: dir, encoding: 'utf8', env: { PATH: `${join(dir, 'machine')}:/usr/bin:/bin` },
  })
  return { dir, run }
}

t.test('use-supported-node.sh: a supported Node is left alone', async (t) => {
  for (const version of ['v22.1.0', 'v24.21.0']) {
    const { dir, run } = sandbox(t, version, true)
    const result = run()
    t.equal(result.status, 0, String(result.stderr))
    t.equal(String(result.stdout).trim(), join(dir, 'machine', 'node'), version)
    t.equal(String(result.stderr), '', `${version}: nothing said`)
  }
})

t.test('use-supported-node.sh: an older Node gets the project\'s Node 24 first on PATH, installed once', async (t) => {
  const { dir, run } = sandbox(t, 'v20.20.2', true)
  const result = run()
  t.equal(result.status, 0, String(result.stderr))
  t.equal(String(result.stdout).trim(), join(dir, '.node', '24', 'bin', 'node'))
  t.equal(String(result.stderr), '', 'already installed: nothing installed, nothing said')
})

t.test('use-supported-node.sh: when Node 24 cannot be installed, the script stops with a reason and leaves nothing behind', async (t) => {
  const { dir, run } = sandbox(t, 'v20.20.2', false)
  const result = run()
  t.equal(result.status, 1)
  t.equal(String(result.stdout), '', 'the command after it did not run')
  t.match(String(result.stderr), /v20\.20\.2 is not a supported Node \(22 or 24\); installing Node 24/)
  t.match(String(result.stderr), /installing Node 24 failed; install Node 22 or 24 and run again/)
  t.same(readdirSync(join(dir, '.node')), [], 'no partial install left')
})

t.test('the npm scripts that run the project\'s code use a supported Node; npm start refuses an older one itself', async (t) => {
  const scripts = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts
  for (const name of ['test', 'tap', 'demo', 'build', 'bench', 'bench:profile', 'bench:startup', 'test:guards', 'test:mutation']) {
    t.match(scripts[name], /^\. scripts\/use-supported-node\.sh && /, name)
  }
  t.notMatch(scripts['start'], /use-supported-node/, 'start runs the machine\'s node: the CLI refuses an unsupported one')
  // CI runs on a checkout without .git, so the ignore files are read rather than asked of git
  t.ok(readFileSync(join(ROOT, '.gitignore'), 'utf8').split('\n').includes('.node/'), '.node is git-ignored')
})
