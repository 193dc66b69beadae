/**
 * A full inbox over real sockets (SPEC §10), on both stores with a bound of three events: delivered
 * events make room for new ones (counted in webhooks_evicted_total, logged at warn), new events get
 * 503 only while pending and failed ones alone fill the store, /readyz's webhooks.ready says so, and
 * a delivery gives the room back.
 */
import t from 'tap'
import { Registry } from 'prom-client'
import { assertProxyError } from '../helpers/proxy-error.js'
import { eventually } from '../helpers/eventually.js'
import { providerEnv, startProvider, startProxy, waitReady } from '../helpers/harness.js'
import { startRedis } from '../helpers/redis-server.js'
import { post, startInboxAndApp, webhooksCommand } from './inbox-harness.js'

for (const kind of ['sqlite', 'redis'] as const) {
  t.test(`${kind}: delivered events are evicted for new ones; 503 only while pending and failed fill the store; readiness follows`, async (t) => {
    const redisUrl = kind === 'redis' ? (await startRedis(t)).url : undefined
    const registry = new Registry()
    const { inbox, app } = await startInboxAndApp(t, {
      PROXY_WEBHOOK_STORE_MAX_EVENTS: '3', PROXY_WEBHOOK_RETRY_SCHEDULE: '1h', ...(redisUrl === undefined ? {} : { PROXY_REDIS_URL: redisUrl }),
    }, { registry })
    await eventually(() => inbox.store.ready(), { what: 'the store ready' })
    // The proxy's /readyz with the inbox's section, as cli.ts wires it.
    const proxy = await startProxy(t, providerEnv(await startProvider(t)), { readiness: [{ name: 'webhooks', read: inbox.readiness }] })
    await waitReady(proxy)
    const readyz = async (): Promise<{ status: number, webhooks: unknown }> => {
      const res = await fetch(`${proxy.url}/readyz`)
      return { status: res.status, webhooks: ((await res.json()) as { webhooks: unknown }).webhooks }
    }
    const delivered = async (n: number): Promise<void> => {
      await eventually(async () => (await inbox.store.list({ status: 'delivered' })).length === n, { what: `${n} delivered` })
    }
    for (let i = 0; i < 3; i++) t.equal((await post(inbox.intakeUrl, `{"n":${i}}`)).status, 200)
    await delivered(3)
    t.match(await readyz(), { status: 200, webhooks: { ready: true, pending: 0, failed: 0 } }, '/readyz: a store full of delivered events is ready')
    for (let i = 3; i < 5; i++) t.equal((await post(inbox.intakeUrl, `{"n":${i}}`)).status, 200, 'a full store of delivered events takes new ones')
    await delivered(3)
    t.same((await inbox.store.list({})).map((e) => e.bytes), [7, 7, 7], 'three events kept')
    t.match(await registry.metrics(), /payments_auth_proxy_webhooks_evicted_total 2\n/, 'two evictions counted')
    const warned = inbox.logs.find('webhook store full: delivered events removed before their retention to make room; their keys no longer catch duplicates (raise PROXY_WEBHOOK_STORE_MAX_EVENTS or _MAX_BYTES)')
    t.same(warned.map((l) => [l['level'], l['evicted']]), [[40, 1], [40, 1]], 'each logged at warn')
    t.equal((await post(inbox.intakeUrl, '{"n":0}')).json['duplicate'], undefined, 'an evicted event sent again is new: its key left the duplicate window')
    await eventually(() => app.deliveries.length === 6, { what: 'delivered again' })
    await delivered(3)

    app.answer((_req, res) => { res.statusCode = 500; res.end() })
    const held: string[] = []
    for (let i = 5; i < 8; i++) held.push(String((await post(inbox.intakeUrl, `{"n":${i}}`)).json['id']))
    await eventually(async () => (await inbox.store.list({ status: 'pending' })).every((e) => e.attempts === 1), { what: 'the three refused by the application' })
    t.same((await inbox.store.list({})).map((e) => e.status), ['pending', 'pending', 'pending'], 'the delivered ones made room for them')
    const refused = await post(inbox.intakeUrl, '{"n":8}')
    await assertProxyError(t, refused, 503, 'WEBHOOK_STORE_UNAVAILABLE', 'pending events alone fill the store')
    t.match(await readyz(), { status: 200, webhooks: { ready: false, pending: 3, failed: 0 } }, '/readyz: webhooks.ready is false while the store refuses events (and the inbox never makes it 503)')
    t.match(await registry.metrics(), /payments_auth_proxy_webhooks_received_total\{outcome="unavailable"\} 1\n/)

    app.answer((_req, res) => { res.end('ok') })
    t.equal((await webhooksCommand(inbox, ['replay', held[0] ?? ''])).code, 0)
    await delivered(1)
    await eventually(async () => ((await readyz()).webhooks as { ready: boolean }).ready, { what: '/readyz: ready again once an event is delivered' })
    t.equal((await post(inbox.intakeUrl, '{"n":8}')).status, 200, 'and new events are taken')
    t.match(await registry.metrics(), /payments_auth_proxy_webhooks_evicted_total 7\n/, 'one for the event sent again, three for the refused ones, one for the last')
  })
}
