import t from 'tap'
import { startRig } from './rig.js'
t.test('probe', async (t) => {
  const rig = await startRig(t)
  const r = await fetch(`${rig.proxy.url}/sandbox/fiat/v1/p`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"a":1}' })
  t.comment(r.status, await r.text())
  const body = new ReadableStream({ start (c) { c.enqueue(new TextEncoder().encode('hello')); c.close() } })
  const r2 = await fetch(`${rig.proxy.url}/sandbox/fiat/v1/p`, { method: 'POST', body, duplex: 'half' } as RequestInit)
  t.comment(r2.status, await r2.text())
})
