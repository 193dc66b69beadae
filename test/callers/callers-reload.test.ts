import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { mkdirSync, mkdtempSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t from 'tap'
import { request } from 'undici'
import { newCallerKey } from '../../src/callers/caller-key-command.js'
import { MAX_CALLERS_FILE_BYTES, parseCallersText } from '../../src/callers/callers-file.js'
import { createCallersHolder } from '../../src/callers/callers-holder.js'
import { keySha256 } from '../../src/callers/judge-caller.js'
import { ConfigError } from '../../src/config/config-error.js'
import { captureLogger, providerEnv, startProvider, startProxy, waitReady } from '../helpers/harness.js'
import { eventually } from '../helpers/eventually.js'
import { folded } from '../helpers/canonical.js'

const fileWith = (dir: string, paths: string): string => {
  const file = join(dir, 'callers.json')
  writeFileSync(file, JSON.stringify({ callers: [{ id: 'svc', sources: ['127.0.0.1'], allow: [{ paths: [paths] }] }] }))
  return file
}

t.test('reload: a good file takes effect, a bad one is refused with the old callers kept', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'callers-reload-'))
  const file = fileWith(dir, '/a')
  const provider = await startProvider(t)
  const proxy = await startProxy(t, providerEnv(provider, { PROXY_CALLERS_FILE: file }))
  await waitReady(proxy)
  const status = async (path: string): Promise<number> => { const res = await request(proxy.url + path); await res.body.text(); return res.statusCode }
  t.equal(await status('/sandbox/fiat/a'), 200)
  t.equal(await status('/sandbox/fiat/b'), 403)
  fileWith(dir, '/b')
  t.equal(proxy.callers?.reload('SIGHUP'), true, 'good file accepted')
  t.equal(await status('/sandbox/fiat/b'), 200, 'new rules in force')
  writeFileSync(file, JSON.stringify({ callers: [{ id: 'svc', sources: ['127.0.0.1'], allow: [{ methods: ['FETCH'] }] }] }))
  t.equal(proxy.callers?.reload('SIGHUP'), false, 'bad file refused')
  t.equal(await status('/sandbox/fiat/b'), 200, 'old rules still in force')
  const refused = proxy.logs.find('callers file refused; the previous callers stay in force')
  t.match(JSON.stringify(refused), /callers\[0\]\.allow\[0\]\.methods\[0\]/, 'the error names the field')
})

t.test('hostile files are refused with the old callers kept; a swapped symlink loads one whole file', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'callers-hostile-'))
  t.teardown(() => { rmSync(dir, { recursive: true, force: true }) })
  const versions = ['v1', 'v2'].map((v) => { mkdirSync(join(dir, v)); return fileWith(join(dir, v), `/${v}`) })
  const link = join(dir, 'callers.json')
  symlinkSync(versions[0] ?? '', link)
  const provider = await startProvider(t)
  const proxy = await startProxy(t, providerEnv(provider, { PROXY_CALLERS_FILE: link }))
  await waitReady(proxy)
  const status = async (path: string): Promise<number> => { const res = await request(proxy.url + path); await res.body.text(); return res.statusCode }
  t.equal(await status('/sandbox/fiat/v1'), 200)
  const hostile: Array<[string, string | Buffer, RegExp]> = [
    ['larger than the bound', Buffer.alloc(MAX_CALLERS_FILE_BYTES + 1, ' '), /larger than/],
    ['not UTF-8', Buffer.from([0x7b, 0xff, 0xfe, 0x7d]), /not valid UTF-8/],
    ['not JSON', '{"callers": [', /not valid JSON/],
  ]
  for (const [label, bytes, problem] of hostile) {
    writeFileSync(versions[0] ?? '', bytes)
    t.equal(proxy.callers?.reload('SIGHUP'), false, `${label}: refused`)
    t.match(JSON.stringify(proxy.logs.find('callers file refused; the previous callers stay in force').at(-1)), problem, `${label}: the reason is logged`)
    t.equal(await status('/sandbox/fiat/v1'), 200, `${label}: the old callers keep working`)
  }
  // As Kubernetes swaps a ConfigMap: a new link renamed over the old one, so a reader sees one file or the other.
  symlinkSync(versions[1] ?? '', `${link}.new`)
  renameSync(`${link}.new`, link)
  t.equal(proxy.callers?.reload('SIGHUP'), true, 'the swapped-in file is accepted')
  t.equal(await status('/sandbox/fiat/v2'), 200, 'its rules are in force')
  t.equal(await status('/sandbox/fiat/v1'), 403, 'and only its rules')
})

t.test('reloads racing a symlink swapped by another process each load one whole file', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'callers-race-'))
  t.teardown(() => { rmSync(dir, { recursive: true, force: true }) })
  // Two files of different sizes (one ~1.5 MB), so a read that mixed them could not parse: the
  // larger the file, the longer each read, and the more of them a swap lands in.
  const versions = ['v1', 'v2'].map((v, i) => {
    mkdirSync(join(dir, v))
    const file = join(dir, v, 'callers.json')
    const padding = ' '.repeat(i === 0 ? 1000 : 1_500_000)
    writeFileSync(file, `{"callers":[{"id":"svc","sources":["127.0.0.1"],"allow":[{"paths":["/${v}"]}]}]${padding}}`)
    return file
  })
  const link = join(dir, 'callers.json')
  symlinkSync(versions[0] ?? '', link)
  const { logger } = captureLogger()
  const holder = createCallersHolder(link, logger)
  // As Kubernetes swaps a ConfigMap: a new link renamed over the old one, here as fast as it can.
  const swapper = spawn(process.execPath, ['-e', `
    const { symlinkSync, renameSync } = require('node:fs')
    const [link, a, b] = process.argv.slice(1)
    const until = Date.now() + 1500
    for (let i = 0; Date.now() < until; i++) { symlinkSync(i % 2 === 0 ? b : a, link + '.new'); renameSync(link + '.new', link) }
  `, link, ...versions], { stdio: 'ignore' })
  const exited = once(swapper, 'exit')
  let running = true
  void exited.then(() => { running = false })
  const seen = { v1: 0, v2: 0, refused: 0 }
  while (running) {
    if (!holder.reload('SIGHUP')) seen.refused++
    const rule = holder.current().keyless[0]?.spec.allow[0]?.paths
    if (rule?.(folded('/v1')) === true) seen.v1++
    if (rule?.(folded('/v2')) === true) seen.v2++
    await new Promise((resolve) => setImmediate(resolve))
  }
  t.same(await exited, [0, null], 'the swapper ran to its end')
  t.equal(seen.refused, 0, 'no reload failed or saw a partial file')
  t.ok(seen.v1 > 0 && seen.v2 > 0, `both files were loaded while the link moved (v1 ${seen.v1}, v2 ${seen.v2})`)
})

t.test('a YAML alias bomb is refused without expanding it', async (t) => {
  const bomb = ['a: &a ["x","x","x","x","x","x","x","x","x","x"]', ...Array.from({ length: 8 }, (_, i) => `${String.fromCharCode(98 + i)}: &${String.fromCharCode(98 + i)} [${Array(10).fill(`*${String.fromCharCode(97 + i)}`).join(',')}]`), 'callers: []'].join('\n')
  const load = parseCallersText(bomb, '.yaml')
  t.notOk(load.ok, 'refused')
  t.match(load.ok ? [] : load.problems, [/^not valid YAML: Excessive alias count/])
})

t.test('a changed file is picked up by the watcher within 2 s, and its rules take effect', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'callers-watch-'))
  const file = fileWith(dir, '/a')
  const provider = await startProvider(t)
  const proxy = await startProxy(t, providerEnv(provider, { PROXY_CALLERS_FILE: file }))
  await waitReady(proxy)
  const status = async (path: string): Promise<number> => { const res = await request(proxy.url + path); await res.body.text(); return res.statusCode }
  const stop = proxy.callers?.watch()
  t.teardown(() => stop?.())
  t.equal(await status('/sandbox/fiat/b'), 403, 'before the change /b is not permitted')
  const changed = Date.now()
  fileWith(dir, '/b')
  await eventually(async () => await status('/sandbox/fiat/b') === 200, { what: 'the new rules to take effect', timeoutMs: 4000, everyMs: 20 })
  const tookMs = Date.now() - changed
  t.ok(tookMs <= 2000, `in force ${tookMs} ms after the change (SPEC: within 2 s)`)
  t.equal(await status('/sandbox/fiat/a'), 403, 'the old rules are gone')
  t.equal(proxy.logs.find('callers file reloaded').length, 1, 'one reload for one change (debounced)')
})

t.test('an invalid callers file at start names the file and field', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'callers-bad-'))
  const file = join(dir, 'callers.yaml')
  writeFileSync(file, 'callers:\n  - id: a\n    sources: [127.0.0.1]\n    allow: []\n  - id: b\n    keySha256: abc\n    allow: [{ methods: [FETCH] }]\n')
  const provider = await startProvider(t)
  const { logger } = captureLogger()
  const error: unknown = await startProxy(t, providerEnv(provider, { PROXY_CALLERS_FILE: file }), { logger }).catch((err: unknown) => err)
  t.ok(error instanceof ConfigError, 'the start is refused with a ConfigError')
  const problems = error instanceof ConfigError ? error.problems : []
  t.ok(problems.includes(`${file}: callers[1].allow[0].methods[0]: "FETCH" is not an HTTP method`), problems.join('\n'))
  t.ok(problems.some((p) => p.startsWith(`${file}: callers[1].keySha256`)), 'and the hash, one problem per line')
})

t.test('caller-key: pak_ and 256 random bits in base64url, with its SHA-256', async (t) => {
  const a = newCallerKey()
  const b = newCallerKey()
  t.match(a.key, /^pak_[A-Za-z0-9_-]{43}$/)
  t.not(a.key, b.key)
  t.equal(a.keySha256, keySha256(a.key))
})
