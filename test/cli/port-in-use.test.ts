/**
 * Issue 35 item 4: a port in use is said in one line naming PROXY_PORT, with a non-zero exit, by
 * `serve`, the demo and `check` (before, serve printed EADDRINUSE in a stack trace after a misleading
 * egress warning, the demo only the egress warning, and check passed).
 */
import { createServer as createHttpServer } from 'node:http'
import { once } from 'node:events'
import { fileURLToPath } from 'node:url'
import t, { type Test } from 'tap'
import { runCli, type Child } from '../helpers/child-proxy.js'
import { holdPort } from '../helpers/ports.js'
import { providerEnv, startProvider } from '../helpers/harness.js'
import { spawn } from 'node:child_process'

function lines (text: string): string[] {
  return text.split('\n').filter((l) => l !== '')
}

t.test('serve: a port in use is one line naming PROXY_PORT, exit 1, nothing started', async (t) => {
  const provider = await startProvider(t)
  const port = await holdPort(t)
  const child = runCli(t, [], providerEnv(provider, { PROXY_PORT: String(port), PROXY_EGRESS_IP_URL: provider.ipEchoUrl }))
  t.equal((await child.exited).code, 1)
  t.same(lines(child.stderr()), [`payments-auth-proxy: port ${port} is in use (PROXY_PORT)`])
  t.notMatch(child.stdout(), /egress IP/, 'no egress check was started')
  t.equal(provider.tokenRequests.length, 0, 'no token was requested')
})

t.test('demo: a port in use is one line, exit 1', async (t) => {
  const port = await holdPort(t)
  const demo = spawn(process.execPath, [fileURLToPath(new URL('../../dist/demo.js', import.meta.url))], { env: { PATH: process.env['PATH'], PROXY_PORT: String(port) }, stdio: ['ignore', 'pipe', 'pipe'] })
  t.teardown(() => { if (demo.exitCode === null) demo.kill('SIGKILL') })
  let err = ''
  demo.stderr.on('data', (c: Buffer) => { err += c.toString('utf8') })
  const [code] = await once(demo, 'exit') as [number | null]
  t.equal(code, 1)
  t.same(lines(err), [`payments-auth-proxy demo: port ${port} is in use (PROXY_PORT)`])
})

async function check (t: Test, port: number): Promise<Child> {
  const provider = await startProvider(t)
  const child = runCli(t, ['check'], providerEnv(provider, { PROXY_PORT: String(port) }))
  await child.exited
  return child
}

t.test('check: a port in use by something else fails the check', async (t) => {
  const port = await holdPort(t)
  const child = await check(t, port)
  t.equal(child.process.exitCode, 1)
  t.match(child.stdout(), new RegExp(`FAIL {2}listen: port ${port} is in use \\(PROXY_PORT\\)`))
  t.match(child.stdout(), /some checks failed/)
})

t.test('check: a port held by a server answering /healthz (check beside the running proxy) warns and passes', async (t) => {
  const port = await holdPort(t, createHttpServer((_req, res) => { res.writeHead(200, { 'content-type': 'application/json' }).end('{"status":"ok"}') }))
  const child = await check(t, port)
  t.equal(child.process.exitCode, 0)
  t.match(child.stdout(), new RegExp(`warn {2}listen: port ${port} is in use \\(PROXY_PORT\\), by a server that answers /healthz`))
})

t.test('check: a free port is reported as such', async (t) => {
  const child = await check(t, 0)
  t.equal(child.process.exitCode, 0)
  t.match(child.stdout(), /ok {4}listen: 127\.0\.0\.1:0 can be opened/)
})
