/**
 * SPEC §10 crash safety, on the real built process (`dist-bundle/cli.mjs`, as `npm start` runs it):
 * events are sent and delivered while the sidecar is killed with SIGKILL; restarted on the same
 * SQLite file, it delivers every event it had answered 200, with the body it answered for.
 */
import t, { type Test } from 'tap'
import { join } from 'node:path'
import { Agent, request } from 'undici'
import { runCli, type Child } from '../helpers/child-proxy.js'
import { eventually, HANG_MS } from '../helpers/eventually.js'
import { providerEnv, startProvider } from '../helpers/harness.js'
import { inboxEnv, inboxPortOf, PATH_TOKEN, startApp, tempDir } from './inbox-harness.js'

const EVENTS = 1000
const SENDERS = 16
// Two sidecar starts, 1000 intakes and their deliveries: well past tap's 60 s on a loaded machine.
t.setTimeout(300_000)

async function startSidecar (t: Test, env: Record<string, string | undefined>): Promise<{ child: Child, port: number }> {
  const child = runCli(t, [], env)
  return { child, port: await inboxPortOf(child) }
}

t.test('kill -9 while receiving and delivering loses no event answered 200', async (t) => {
  const app = await startApp(t)
  // A little slow, so deliveries are in flight and a backlog waits when the kill comes.
  app.answer((_req, res) => { setTimeout(() => res.end('ok'), 2) })
  const provider = await startProvider(t)
  const env = { ...inboxEnv(app.url, join(tempDir(t), 'webhooks.db')), ...providerEnv(provider), LOG_LEVEL: 'info' }
  const first = await startSidecar(t, env)

  const answered = new Map<string, number>()
  const agent = new Agent({ connections: SENDERS })
  t.teardown(() => agent.destroy())
  let next = 0
  const send = async (port: number): Promise<void> => {
    while (next < EVENTS) {
      const n = next++
      try {
        const res = await request(`http://127.0.0.1:${port}/webhooks/${PATH_TOKEN}`, {
          method: 'POST', dispatcher: agent, headers: { 'content-type': 'application/json' }, body: JSON.stringify({ n, pad: 'x'.repeat(512) }),
        })
        const body = await res.body.json() as { id?: string }
        if (res.statusCode === 200 && body.id !== undefined) answered.set(body.id, n)
      } catch {
        // Killed mid-request: not answered 200, so the sender would retry; nothing is promised for it.
      }
    }
  }
  const senders = Array.from({ length: SENDERS }, () => send(first.port))
  await eventually(() => answered.size >= 300 && app.deliveries.length >= 50, { what: 'intake and delivery under way', timeoutMs: HANG_MS, progress: () => answered.size + app.deliveries.length })
  first.child.process.kill('SIGKILL')
  await first.child.exited
  await Promise.all(senders)
  const answeredBeforeKill = answered.size
  const deliveredBeforeKill = new Set(app.deliveries.map((d) => d.headers['webhook-id'])).size
  t.ok(answeredBeforeKill > deliveredBeforeKill, `killed with a backlog: ${answeredBeforeKill} answered, ${deliveredBeforeKill} delivered`)

  await startSidecar(t, env)
  const deliveredIds = (): Set<string> => new Set(app.deliveries.map((d) => String(d.headers['webhook-id'])))
  await eventually(() => [...answered.keys()].every((id) => deliveredIds().has(id)), {
    what: 'every event answered 200 delivered after the restart', timeoutMs: HANG_MS, everyMs: 50, progress: () => app.deliveries.length,
    detail: () => `${[...answered.keys()].filter((id) => !deliveredIds().has(id)).length} missing`,
  })
  for (const d of app.deliveries) {
    const n = answered.get(String(d.headers['webhook-id']))
    if (n !== undefined && (JSON.parse(d.body.toString()) as { n: number }).n !== n) t.fail(`event ${String(d.headers['webhook-id'])} delivered with another body`)
  }
  t.pass(`all ${answered.size} events answered 200 were delivered (${app.deliveries.length} deliveries, ${app.deliveries.length - deliveredIds().size} repeated)`)
})
