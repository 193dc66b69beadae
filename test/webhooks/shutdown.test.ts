/**
 * SIGTERM with the inbox on (SPEC §10 "Shutdown"), on the built process: an intake in progress
 * finishes storing and is answered 200, new connections are refused, and the process exits 0; the
 * event is delivered after the next start.
 */
import t from 'tap'
import { connect } from 'node:net'
import { join } from 'node:path'
import { runCli } from '../helpers/child-proxy.js'
import { eventually, HANG_MS } from '../helpers/eventually.js'
import { providerEnv, startProvider } from '../helpers/harness.js'
import { inboxEnv, inboxPortOf, PATH_TOKEN, startApp, tempDir } from './inbox-harness.js'

t.test('SIGTERM: an intake in progress is stored and answered 200, then the process exits 0; delivery resumes at the next start', async (t) => {
  const app = await startApp(t)
  app.answer(() => {})
  const provider = await startProvider(t)
  const env = { ...inboxEnv(app.url, join(tempDir(t), 'webhooks.db')), ...providerEnv(provider), LOG_LEVEL: 'info', PROXY_SHUTDOWN_GRACE_SECONDS: '5' }
  const first = runCli(t, [], env)
  const port = await inboxPortOf(first)
  const body = '{"id":"evt_during_shutdown"}'
  const socket = connect(port, '127.0.0.1')
  t.teardown(() => socket.destroy())
  let answer = ''
  socket.on('data', (c: Buffer) => { answer += c.toString() })
  const closed = new Promise((resolve) => socket.once('close', resolve))
  socket.write(`POST /webhooks/${PATH_TOKEN} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n${body.slice(0, 5)}`)
  await new Promise((resolve) => setTimeout(resolve, 200))
  first.process.kill('SIGTERM')
  await first.waitFor(/shutting down/)
  // The log line comes just before the listeners close: new connections are refused soon after,
  // while the intake in progress is still open.
  const connectOutcome = (): Promise<string> => fetch(`http://127.0.0.1:${port}/healthz`).then(() => 'answered', (err: Error & { cause?: { code?: string } }) => err.cause?.code ?? 'error')
  await eventually(async () => await connectOutcome() === 'ECONNREFUSED', { what: 'new connections refused', timeoutMs: HANG_MS, everyMs: 20 })
  t.pass('no new connection is accepted')
  socket.write(body.slice(5))
  await closed
  t.match(answer, /^HTTP\/1\.1 200/, 'the intake in progress is answered 200')
  const id = /"id":"(msg_[^"]+)"/.exec(answer)?.[1]
  t.ok(id, 'with its event id')
  t.equal((await first.exited).code, 0, 'exit 0')

  // The attempt in flight at SIGTERM was abandoned: only a delivery after the restart counts.
  app.deliveries.length = 0
  app.answer((_req, res) => { res.end('ok') })
  const second = runCli(t, [], env)
  await inboxPortOf(second)
  await eventually(() => app.deliveries.some((d) => d.headers['webhook-id'] === id && d.body.toString() === body), { what: 'the event delivered after the restart', timeoutMs: HANG_MS })
})
