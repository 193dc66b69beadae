import t from 'tap'
import { assertStillServes, get, send, startRig } from './rig.js'

t.test('a client Authorization header, sent once or twice, never replaces the proxy token', async (t) => {
  const rig = await startRig(t)
  const cases: Array<[string, string[]]> = [
    ['once', ['Authorization: Bearer client-token']],
    ['twice', ['Authorization: Bearer client-token', 'Authorization: Bearer other-client-token']],
    ['other scheme', ['Authorization: Basic Y2xpZW50OnNlY3JldA==']],
    ['empty', ['Authorization:']],
  ]
  for (const [label, headers] of cases) {
    rig.provider.upstreamRequests.length = 0
    const res = await send(rig, get('/sandbox/fiat/v1/ping', headers))
    t.equal(res.status, 200, `${label}: forwarded`)
    const [forwarded] = rig.provider.upstreamRequests
    t.equal(forwarded?.tokenValid, true, `${label}: the proxy's token arrived`)
    t.match(forwarded?.headers.authorization, /^Bearer [\w-]+\.[\w-]+\.[\w-]+$/, `${label}: one Bearer JWT`)
    t.notMatch(forwarded?.headers.authorization ?? '', /client|Basic/, `${label}: nothing of the client's`)
    t.equal(rig.provider.tokenRequests.length, rig.startupTokenRequests, `${label}: no token request`)
    await assertStillServes(t, rig, label)
  }
})
