import t from 'tap'
import { signJwt, verifyJwt } from '../../src/fake-provider/jwt.js'

t.test('round-trips a payload and rejects tampering', async (t) => {
  const token = signJwt({ sub: 'a', n: 1 }, 'secret')
  t.same(verifyJwt(token, 'secret'), { sub: 'a', n: 1 })
  t.equal(verifyJwt(token, 'other'), null, 'wrong secret')
  const [header, , signature] = token.split('.')
  const forged = `${header}.${Buffer.from('{"sub":"b","n":1}').toString('base64url')}.${signature}`
  t.equal(verifyJwt(forged, 'secret'), null, 'altered payload')
  t.equal(verifyJwt(`${token.slice(0, -1)}${token.endsWith('A') ? 'B' : 'A'}`, 'secret'), null, 'altered signature')
})

t.test('returns null for malformed tokens', async (t) => {
  for (const bad of ['', 'a.b', 'a.b.c.d', 'a..c', 'a.b.c!', signJwt(['array'], 's')]) {
    t.equal(verifyJwt(bad, 's'), null, JSON.stringify(bad))
  }
  const noneHeader = Buffer.from('{"alg":"none"}').toString('base64url')
  const [, payload] = signJwt({ a: 1 }, 's').split('.')
  t.equal(verifyJwt(`${noneHeader}.${payload}.`, 's'), null, 'alg none')
})
