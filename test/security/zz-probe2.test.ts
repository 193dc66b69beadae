import t from 'tap'
import { connect } from 'node:net'
import { startRig, get } from './rig.js'
t.test('probe', async (t) => {
  const rig = await startRig(t)
  const s = connect(rig.proxy.port, '127.0.0.1')
  let raw = ''
  s.on('data', (c) => { raw += c.toString('latin1') })
  s.write(get('/sandbox/fiat/v1/ping'))
  await new Promise((r) => setTimeout(r, 1000))
  t.comment(raw)
  s.destroy()
})
