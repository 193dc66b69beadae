/**
 * Issue 43 item 9: with the webhook inbox on, `check` reports what `serve` needs of it, one line
 * each (its listen address, the path token, the signing secret, the store), never a secret's value,
 * and fails what would stop `serve`: a store path that is a directory, in /proc or not a database,
 * a port in use or the proxy's own, Redis refusing. On the built CLI.
 */
import { writeFileSync } from 'node:fs'
import { createServer as createHttpServer } from 'node:http'
import { join } from 'node:path'
import t, { type Test } from 'tap'
import { sharePort } from '../../src/http/listen-check.js'
import { runCli } from '../helpers/child-proxy.js'
import { freePort, holdPort } from '../helpers/ports.js'
import { providerEnv, startProvider } from '../helpers/harness.js'
import { startRedis } from '../helpers/redis-server.js'
import { PATH_TOKEN, PREVIOUS_PATH_TOKEN, SIGNING_SECRET, tempDir } from '../webhooks/inbox-harness.js'

async function check (t: Test, overrides: Record<string, string>): Promise<{ code: number | null, out: string, err: string }> {
  const provider = await startProvider(t)
  const env = providerEnv(provider, {
    PROXY_WEBHOOK_LISTEN: `127.0.0.1:${await freePort()}`,
    PROXY_WEBHOOK_PATH_TOKEN: PATH_TOKEN,
    PROXY_WEBHOOK_SIGNING_SECRET: SIGNING_SECRET,
    PROXY_WEBHOOK_DELIVER_TO: 'http://127.0.0.1:9/events',
    PROXY_WEBHOOK_STORE_PATH: join(tempDir(t), 'data', 'webhooks.db'),
    ...overrides,
  })
  const child = runCli(t, ['check'], env)
  const { code } = await child.exited
  const out = child.stdout()
  t.notMatch(out + child.stderr(), new RegExp(`${PATH_TOKEN}|${PREVIOUS_PATH_TOKEN}|${SIGNING_SECRET.slice('whsec_'.length, 20)}`), 'no token or secret printed')
  return { code, out, err: child.stderr() }
}

t.test('two listeners share a port when one address covers the other; port 0 is always a fresh one', async (t) => {
  const cases: Array<[string, number, string, number, boolean]> = [
    ['127.0.0.1', 8080, '127.0.0.1', 8080, true],
    ['0.0.0.0', 8080, '127.0.0.1', 8080, true],
    ['10.0.0.5', 8080, '0.0.0.0', 8080, true],
    ['::', 8080, '127.0.0.1', 8080, true],
    ['::1', 8080, '::', 8080, true],
    ['0.0.0.0', 8080, '::1', 8080, false],
    ['127.0.0.1', 8080, '::1', 8080, false],
    ['127.0.0.1', 8080, '10.0.0.5', 8080, false],
    ['127.0.0.1', 8080, '127.0.0.1', 8443, false],
    ['127.0.0.1', 0, '127.0.0.1', 0, false],
  ]
  for (const [aHost, aPort, bHost, bPort, shared] of cases) {
    t.equal(sharePort({ host: aHost, port: aPort }, { host: bHost, port: bPort }), shared, `${aHost}:${aPort} and ${bHost}:${bPort}`)
    t.equal(sharePort({ host: bHost, port: bPort }, { host: aHost, port: aPort }), shared, `${bHost}:${bPort} and ${aHost}:${aPort}`)
  }
})

t.test('an inbox that can start: a line each for its listen address, path token, signing secret and store', async (t) => {
  const dir = tempDir(t)
  const port = await freePort()
  const store = join(dir, 'later', 'webhooks.db')
  const fresh = await check(t, { PROXY_WEBHOOK_LISTEN: `127.0.0.1:${port}`, PROXY_WEBHOOK_STORE_PATH: store, PROXY_WEBHOOK_PATH_TOKEN_PREVIOUS: PREVIOUS_PATH_TOKEN })
  t.equal(fresh.code, 0, fresh.out + fresh.err)
  t.match(fresh.out, `ok    webhook inbox listen: 127.0.0.1:${port} can be opened\n`)
  t.match(fresh.out, `ok    webhook path token: ${PATH_TOKEN.length} characters (PROXY_WEBHOOK_PATH_TOKEN); PROXY_WEBHOOK_PATH_TOKEN_PREVIOUS is accepted too, until removed\n`)
  t.match(fresh.out, /^ok {4}webhook signing secret: a \d+-byte key \(PROXY_WEBHOOK_SIGNING_SECRET\)$/m)
  t.match(fresh.out, `ok    webhook store: ${store} is created at the sidecar's start (${dir} is writable)\n`)

  // The file as a sidecar leaves it: made by the webhooks command, which opens it the same way.
  const made = runCli(t, ['webhooks', 'list'], providerEnv(await startProvider(t), {
    PROXY_WEBHOOK_LISTEN: '127.0.0.1:0', PROXY_WEBHOOK_PATH_TOKEN: PATH_TOKEN, PROXY_WEBHOOK_SIGNING_SECRET: SIGNING_SECRET, PROXY_WEBHOOK_DELIVER_TO: 'http://127.0.0.1:9/events', PROXY_WEBHOOK_STORE_PATH: store,
  }))
  t.equal((await made.exited).code, 0, made.stderr())
  const existing = await check(t, { PROXY_WEBHOOK_STORE_PATH: store })
  t.equal(existing.code, 0, existing.out)
  t.match(existing.out, `ok    webhook store: ${store} opens, 0 pending, 0 failed\n`)
})

t.test('what would stop serve fails check, naming the variable', async (t) => {
  const dir = tempDir(t)
  const garbage = join(dir, 'garbage.db')
  writeFileSync(garbage, 'not a database, but long enough to look like a header of one '.repeat(4))
  const taken = await holdPort(t)
  const proxyPort = await freePort()
  const cases: Array<[string, Record<string, string>, RegExp]> = [
    ['a store path that is a directory', { PROXY_WEBHOOK_STORE_PATH: dir }, new RegExp(`^FAIL  webhook store: ${dir} is a directory, not a database file \\(PROXY_WEBHOOK_STORE_PATH\\)$`, 'm')],
    ['a file that is not a database', { PROXY_WEBHOOK_STORE_PATH: garbage }, new RegExp(`^FAIL  webhook store: the webhook store PROXY_WEBHOOK_STORE_PATH=${garbage} cannot be opened \\(SQLITE_NOTADB`, 'm')],
    ['a port in use', { PROXY_WEBHOOK_LISTEN: `127.0.0.1:${taken}` }, new RegExp(`^FAIL  webhook inbox listen: port ${taken} is in use \\(PROXY_WEBHOOK_LISTEN\\)$`, 'm')],
    ['the proxy\'s own port', { PROXY_PORT: String(proxyPort), PROXY_WEBHOOK_LISTEN: `0.0.0.0:${proxyPort}` }, new RegExp(`^FAIL  webhook inbox listen: 0\\.0\\.0\\.0:${proxyPort} is the port of the proxy's own listener 127\\.0\\.0\\.1:${proxyPort} \\(PROXY_WEBHOOK_LISTEN, PROXY_HOST, PROXY_PORT\\)$`, 'm')],
  ]
  if (process.platform === 'linux') cases.push(['a directory that takes no file (root may "write" /proc)', { PROXY_WEBHOOK_STORE_PATH: '/proc/webhooks.db' }, /^FAIL {2}webhook store: \/proc\/webhooks\.db cannot be created: \/proc does not take new files \(E[A-Z]+\) \(PROXY_WEBHOOK_STORE_PATH\)$/m])
  for (const [label, overrides, expected] of cases) {
    const { code, out } = await check(t, overrides)
    t.equal(code, 1, label)
    t.match(out, expected, label)
    t.match(out, /some checks failed\n$/, label)
  }
})

t.test('beside a running inbox, its port answering /healthz is a warning, not a failure', async (t) => {
  const port = await holdPort(t, createHttpServer((req, res) => { res.setHeader('content-type', 'application/json').end(req.url === '/healthz' ? '{"status":"ok"}' : '{}') }))
  const { code, out } = await check(t, { PROXY_WEBHOOK_LISTEN: `127.0.0.1:${port}` })
  t.equal(code, 0, out)
  t.match(out, `warn  webhook inbox listen: port ${port} is in use (PROXY_WEBHOOK_LISTEN), by a server that answers /healthz`)
})

t.test('Redis: its answer is the store\'s line; appendonly no is a warning', async (t) => {
  const password = 'inbox-check-pw-5521'
  const redis = await startRedis(t, { password })
  const answers = await check(t, { PROXY_REDIS_URL: redis.url })
  t.equal(answers.code, 0, answers.out + answers.err)
  t.match(answers.out, 'warn  webhook store: Redis answers (0 pending, 0 failed), but runs without append-only persistence (appendonly no): events answered 200 can be lost if Redis restarts\n')
  const refused = await check(t, { PROXY_REDIS_URL: `redis://:wrong-${password}@127.0.0.1:${redis.port}` })
  t.equal(refused.code, 1)
  t.match(refused.out, 'FAIL  webhook store: Redis refused the connection: WRONGPASS: the user name or password in the URL is wrong (PROXY_REDIS_URL or PROXY_REDIS_URL_FILE)\n')
  t.notMatch(answers.out + answers.err + refused.out + refused.err, password, 'the password is never printed')
})
