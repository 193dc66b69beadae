/**
 * A provider's burst (issue 56 item 5), on the real built process (`dist-bundle/cli.mjs`, as `npm
 * start` runs it), for the SQLite store and for Redis: 1,000 events of 2 KiB sent at once, each on a
 * connection of its own, are all answered 200 and all stored; and a `kill -9` at a random moment
 * during such a burst loses none that was answered 200: after the restart every one of them is in
 * the store, under the event id it was sent with. How fast they are answered is a benchmark's figure
 * (`npm run bench -- --workloads burst`), not asserted here.
 */
import t, { type Test } from 'tap'
import { once } from 'node:events'
import { connect } from 'node:net'
import { join } from 'node:path'
import { runCli, type Child } from '../helpers/child-proxy.js'
import { eventually } from '../helpers/eventually.js'
import { providerEnv, startProvider } from '../helpers/harness.js'
import { startRedis } from '../helpers/redis-server.js'
import { inboxEnv, inboxPortOf, PATH_TOKEN, startApp, tempDir } from './inbox-harness.js'

// Two bursts and two starts per store, on a machine that may be loaded: a bound for a hang only.
t.setTimeout(900_000)

const EVENTS = 1000
const EVENT_BYTES = 2048
/** Only a connection that hangs reaches it: a loaded machine answers late, never this late. */
const HANG_MS = 120_000

interface Answer { status: number | string, id: string | null }

function eventBody (eventId: string): string {
  const base = JSON.stringify({ id: eventId, type: 'payment.updated', pad: '' })
  return `${base.slice(0, -2)}${'x'.repeat(EVENT_BYTES - base.length)}"}`
}

/** One event on a connection of its own: its answer's status and event id, or the connection's error code. */
function sendOne (port: number, eventId: string, onAnswer: (answer: Answer) => void): Promise<Answer> {
  return new Promise((resolve) => {
    const body = eventBody(eventId)
    const socket = connect(port, '127.0.0.1')
    let text = ''
    const done = (answer: Answer): void => {
      clearTimeout(timer)
      onAnswer(answer)
      resolve(answer)
    }
    const timer = setTimeout(() => { socket.destroy(); done({ status: 'hung', id: null }) }, HANG_MS)
    socket.setEncoding('latin1')
    socket.once('connect', () => {
      socket.write(`POST /webhooks/${PATH_TOKEN} HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\ncontent-length: ${body.length}\r\nconnection: close\r\n\r\n${body}`)
    })
    socket.on('data', (chunk: string) => { text += chunk })
    socket.once('error', (err: NodeJS.ErrnoException) => { done({ status: err.code ?? 'error', id: null }) })
    socket.once('close', () => {
      const status = /^HTTP\/1\.1 (\d{3})/.exec(text)?.[1]
      const id = /"id":"(msg_[^"]+)"/.exec(text)?.[1] ?? null
      done({ status: status === undefined ? 'closed' : Number(status), id })
    })
  })
}

/** EVENTS events sent at once; `answered` gets the event id sent for each stored id answered 200. */
async function burst (port: number, round: string, answered: Map<string, string>, onAnswer: () => void = () => {}): Promise<Record<string, number>> {
  const answers = await Promise.all(Array.from({ length: EVENTS }, async (_, n) => {
    const eventId = `evt_${round}_${n}`
    return await sendOne(port, eventId, (answer) => {
      if (answer.status === 200 && answer.id !== null) answered.set(answer.id, eventId)
      onAnswer()
    })
  }))
  const statuses: Record<string, number> = {}
  for (const a of answers) statuses[String(a.status)] = (statuses[String(a.status)] ?? 0) + 1
  return statuses
}

/** What `webhooks list --json` finds in the store: each stored id with the event id its key was read from (at /id). */
async function storedEvents (t: Test, env: Record<string, string | undefined>): Promise<Map<string, string>> {
  const command = runCli(t, ['webhooks', 'list', '--json'], env)
  // 'close', not 'exit': the whole of its output read.
  const [code] = await once(command.process, 'close') as [number | null]
  t.equal(code, 0, 'webhooks list ran')
  const lines = command.stdout().split('\n').filter((line) => line !== '')
  return new Map(lines.map((line) => {
    const e = JSON.parse(line) as { id: string, key: string }
    return [e.id, e.key.replace(/^id:/, '')]
  }))
}

async function startSidecar (t: Test, env: Record<string, string | undefined>): Promise<{ child: Child, port: number }> {
  const child = runCli(t, [], env)
  return { child, port: await inboxPortOf(child) }
}

const stores = [
  { name: 'SQLite', env: async (t: Test) => ({ PROXY_WEBHOOK_STORE_PATH: join(tempDir(t), 'webhooks.db') }) },
  { name: 'Redis', env: async (t: Test) => ({ PROXY_REDIS_URL: (await startRedis(t)).url }) },
]

for (const store of stores) {
  t.test(`${store.name}: 1,000 events sent at once are all answered 200 and stored; a kill -9 during such a burst loses none answered 200`, async (t) => {
    const app = await startApp(t)
    const provider = await startProvider(t)
    const env = { ...inboxEnv(app.url, '/nonexistent/not-used.db', { PROXY_WEBHOOK_EVENT_ID_POINTER: '/id' }), ...providerEnv(provider), LOG_LEVEL: 'info', ...await store.env(t) }
    const first = await startSidecar(t, env)

    const whole = new Map<string, string>()
    t.same(await burst(first.port, 'whole', whole), { 200: EVENTS }, `all ${EVENTS} answered 200`)
    t.equal(whole.size, EVENTS, 'each with an id of its own')

    // Killed once a random number of the second burst's events have been answered 200: the moment
    // falls anywhere in the burst, with events parsed, held, in the store's hands and answered.
    const killAfter = 1 + Math.floor(Math.random() * (EVENTS - 1))
    const answered = new Map<string, string>()
    let killed = false
    const killing = burst(first.port, 'killed', answered, () => {
      if (killed || answered.size < killAfter) return
      killed = true
      first.child.process.kill('SIGKILL')
    })
    const statuses = await killing
    // A loaded machine may answer fewer 200s than the number drawn (a store past its deadline answers 503): then it is killed once every event is answered, never left running.
    const killedIn = killed ? `after ${killAfter} answers 200` : 'after the burst, which answered fewer 200s than drawn'
    if (!killed) first.child.process.kill('SIGKILL')
    await first.child.exited
    t.comment(`killed ${killedIn} (${JSON.stringify(statuses)})`)
    t.ok(answered.size > 0, `events answered 200 before the kill (${answered.size})`)

    await startSidecar(t, env)
    const stored = await storedEvents(t, env)
    const missing = (events: Map<string, string>): Array<[string, string]> => [...events].filter(([id, eventId]) => stored.get(id) !== eventId)
    t.same(missing(whole), [], `the first burst's ${whole.size} events are in the store`)
    t.same(missing(answered), [], `every one of the ${answered.size} events answered 200 before the kill is in the store after the restart`)
    const ids = [...whole.keys(), ...answered.keys()]
    const undelivered = (): string[] => {
      const delivered = new Set(app.deliveries.map((d) => String(d.headers['webhook-id'])))
      return ids.filter((id) => !delivered.has(id))
    }
    await eventually(() => undelivered().length === 0, {
      what: 'every event answered 200 delivered after the restart', timeoutMs: HANG_MS, everyMs: 100, detail: () => `${undelivered().length} not delivered`,
    })
  })
}
