/** The provider's signature on an incoming webhook (SPEC §10), table-tested: both schemes, each way to be wrong. */
import t from 'tap'
import { createHmac } from 'node:crypto'
import type { ProviderVerification } from '../../src/config/webhook-config.js'
import { isValidSignature } from '../../src/webhooks/provider-signature.js'

const BODY = Buffer.from('{"event":"payout.settled","id":"e1"}')
const SECRET = 'provider-dashboard-secret'
const headerSecret: ProviderVerification = { scheme: 'header-secret', header: 'x-webhook-secret', secret: SECRET }
const hexSha256: ProviderVerification = { scheme: 'hmac', header: 'x-signature', secret: SECRET, algorithm: 'sha256', encoding: 'hex', prefix: 'sha256=' }
const base64Sha512: ProviderVerification = { scheme: 'hmac', header: 'x-signature', secret: SECRET, algorithm: 'sha512', encoding: 'base64', prefix: '' }

const hex = createHmac('sha256', SECRET).update(BODY).digest('hex')
const base64 = createHmac('sha512', SECRET).update(BODY).digest('base64')
// A base64 MAC whose letters, upper-cased, are a different MAC: only a case-sensitive compare refuses it.
const base64Upper = base64.toUpperCase()

const cases: Array<[string, ProviderVerification, string | string[] | undefined, boolean, Buffer?]> = [
  ['header-secret: the secret itself', headerSecret, SECRET, true],
  ['header-secret: absent', headerSecret, undefined, false],
  ['header-secret: sent twice', headerSecret, [SECRET, SECRET], false],
  ['header-secret: another value of the same length', headerSecret, SECRET.replace('p', 'q'), false],
  ['header-secret: a prefix of the secret', headerSecret, SECRET.slice(0, -1), false],
  ['header-secret: an HMAC of the body is not the secret', headerSecret, `sha256=${hex}`, false],
  ['header-secret: in another case', headerSecret, SECRET.toUpperCase(), false],
  ['hmac hex: the prefix and the MAC', hexSha256, `sha256=${hex}`, true],
  ['hmac hex: upper-case hex is the same MAC', hexSha256, `sha256=${hex.toUpperCase()}`, true],
  ['hmac hex: without the prefix', hexSha256, hex, false],
  ['hmac hex: the secret itself', hexSha256, SECRET, false],
  ['hmac hex: a MAC of another body', hexSha256, `sha256=${hex}`, false, Buffer.from('{"event":"payout.settled","id":"e2"}')],
  ['hmac hex: absent', hexSha256, undefined, false],
  ['hmac base64 sha512: the MAC', base64Sha512, base64, true],
  ['hmac base64: another case is another MAC', base64Sha512, base64Upper, false],
  ['hmac base64: the sha256 MAC in base64', base64Sha512, createHmac('sha256', SECRET).update(BODY).digest('base64'), false],
]

for (const [name, verify, header, expected, body] of cases) {
  t.test(name, async (t) => {
    t.equal(isValidSignature(verify, header, body ?? BODY), expected)
  })
}
