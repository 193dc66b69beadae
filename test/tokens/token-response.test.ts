import t from 'tap'
import { signJwt } from '../../src/fake-provider/index.js'
import { TokenRequestError, type TokenFailureReason } from '../../src/tokens/token-grant.js'
import { parseTokenResponse, type RawTokenResponse } from '../../src/tokens/token-response.js'

const NOW_MS = Date.UTC(2026, 10, 22, 12, 0, 0)
const NOW_S = NOW_MS / 1000
const SENT_MONO_MS = 5_000
const MAX_LIFETIME_S = 86_400
const readings = { receivedWallMs: NOW_MS, sentMonoMs: SENT_MONO_MS, maxLifetimeS: MAX_LIFETIME_S }
const JWT = signJwt({ exp: NOW_S + 7200, marker: 'SECRET-MARKER' }, 'k')
const MARKER = 'SECRET-MARKER'

function raw (body: unknown, overrides: Partial<RawTokenResponse> = {}): RawTokenResponse {
  return {
    statusCode: 200,
    contentType: 'application/json',
    date: new Date(NOW_MS).toUTCString(),
    body: typeof body === 'string' ? body : JSON.stringify(body),
    ...overrides,
  }
}

const ok = (fields: Record<string, unknown>): unknown => ({ success: true, token: JWT, expiresAt: NOW_S + 7200, ...fields })

const rejections: Array<[string, RawTokenResponse, TokenFailureReason]> = [
  ['401 from the token endpoint', raw({ success: false, message: MARKER }, { statusCode: 401 }), 'rejected'],
  ['403 from the token endpoint', raw({ success: false }, { statusCode: 403 }), 'rejected'],
  ['500 from the token endpoint', raw(ok({}), { statusCode: 500 }), 'http_status'],
  ['an HTML page', raw(`<html><body>${MARKER}</body></html>`, { contentType: 'text/html' }), 'not_json'],
  ['malformed JSON', raw(`{not json ${MARKER}`), 'not_json'],
  ['an empty body', raw(''), 'not_json'],
  ['JSON null', raw('null'), 'not_json'],
  ['a JSON string', raw(`"${JWT}"`), 'not_json'],
  ['success: false', raw(ok({ success: false })), 'success_false'],
  ['success: "true" as a string', raw(ok({ success: 'true' })), 'success_false'],
  ['success missing', raw({ token: JWT, expiresAt: NOW_S + 7200 }), 'success_false'],
  ['token missing', raw(ok({ token: undefined })), 'bad_token'],
  ['token empty', raw(ok({ token: '' })), 'bad_token'],
  ['token a number', raw(ok({ token: 12345 })), 'bad_token'],
  ['token not a JWT', raw(ok({ token: `opaque-${MARKER}` })), 'bad_token'],
  ['token with CR/LF', raw(ok({ token: `${JWT}\r\nx-injected: ${MARKER}` })), 'bad_token'],
  ['token with a trailing LF', raw(ok({ token: `${JWT}\n` })), 'bad_token'],
  ['token of 100 KB', raw(ok({ token: `${JWT}${'A'.repeat(100 * 1024)}` })), 'bad_token'],
  ['token whose header is not JSON', raw(ok({ token: `bm90LWpzb24.${JWT.split('.').slice(1).join('.')}` })), 'bad_token'],
  ['expiresAt null', raw(ok({ expiresAt: null })), 'bad_expires_at'],
  ['expiresAt missing', raw(ok({ expiresAt: undefined })), 'bad_expires_at'],
  ['expiresAt a string', raw(ok({ expiresAt: String(NOW_S + 7200) })), 'bad_expires_at'],
  ['expiresAt a float', raw(ok({ expiresAt: NOW_S + 7200.5 })), 'bad_expires_at'],
  ['expiresAt zero', raw(ok({ expiresAt: 0 })), 'bad_expires_at'],
  ['expiresAt negative', raw(ok({ expiresAt: -1 })), 'bad_expires_at'],
  ['expiresAt in milliseconds', raw(ok({ expiresAt: (NOW_S + 7200) * 1000 })), 'expires_at_in_milliseconds'],
  ['expiresAt in the past', raw(ok({ expiresAt: NOW_S - 60 })), 'expired'],
  ['expiresAt now', raw(ok({ expiresAt: NOW_S })), 'expired'],
  ['expiresAt within the clock resolution', raw(ok({ expiresAt: NOW_S + 1 })), 'expired'],
  ['expiresAt past by the provider clock though future by ours', raw(ok({ expiresAt: NOW_S + 600 }), { date: new Date(NOW_MS + 3_600_000).toUTCString() }), 'expired'],
]

t.test('rejects each bad token response with its reason and only safe facts', async (t) => {
  for (const [name, response, reason] of rejections) {
    let error: unknown
    try {
      parseTokenResponse(response, readings)
    } catch (err) {
      error = err
    }
    t.ok(error instanceof TokenRequestError, `${name}: rejected`)
    if (!(error instanceof TokenRequestError)) continue
    t.equal(error.reason, reason, `${name}: reason`)
    t.equal(error.details['status'], response.statusCode, `${name}: status kept`)
    t.equal(error.details['contentType'], response.contentType, `${name}: content type kept`)
    t.equal(error.details['length'], Buffer.byteLength(response.body), `${name}: length kept`)
    const told = `${error.message} ${JSON.stringify(error.details)}`
    t.notOk(told.includes(MARKER) || told.includes(JWT), `${name}: neither body nor token in the error`)
  }
})

const acceptances: Array<[string, RawTokenResponse, number]> = [
  ['a 2-hour token', raw(ok({})), 7199],
  ['a 1-hour token', raw(ok({ expiresAt: NOW_S + 3600 })), 3599],
  ['a 10-second token', raw(ok({ expiresAt: NOW_S + 10 })), 9],
  ['a token judged on the provider clock an hour ahead', raw(ok({ expiresAt: NOW_S + 3600 + 7200 }), { date: new Date(NOW_MS + 3_600_000).toUTCString() }), 7199],
  ['a token judged on the provider clock an hour behind', raw(ok({ expiresAt: NOW_S - 3600 + 7200 }), { date: new Date(NOW_MS - 3_600_000).toUTCString() }), 7199],
  ['a token without a Date header (our clock judges)', raw(ok({}), { date: undefined }), 7199],
  ['a token with an unreadable Date header (our clock judges)', raw(ok({}), { date: 'yesterday' }), 7199],
  ['expiresAt beyond now + 24 h (capped)', raw(ok({ expiresAt: NOW_S + 48 * 3600 })), MAX_LIFETIME_S],
  ['expiresAt in the year 9999 (capped)', raw(ok({ expiresAt: Date.UTC(9999, 11, 31) / 1000 })), MAX_LIFETIME_S],
  ['a 201 answer', raw(ok({}), { statusCode: 201 }), 7199],
]

t.test('accepts good token responses with a conservative, capped lifetime on the monotonic clock', async (t) => {
  for (const [name, response, lifetimeS] of acceptances) {
    const grant = parseTokenResponse(response, readings)
    const expiresAt = (JSON.parse(response.body) as { expiresAt: number }).expiresAt
    t.same(grant, {
      token: JWT,
      expiresAt,
      lifetimeS,
      obtainedAtMs: SENT_MONO_MS,
      expiresAtMs: SENT_MONO_MS + lifetimeS * 1000,
    }, name)
  }
})

t.test('the believed expiry never exceeds the provider expiry however late in its second the Date was stamped', async (t) => {
  // The Date header truncates to the second: at receipt the provider may really be up to 999 ms
  // past it, and the request was sent (where the lifetime is counted from) before receipt.
  const grant = parseTokenResponse(raw(ok({})), readings)
  for (const lagMs of [0, 1, 500, 999]) {
    const believedEndOnProviderClockMs = NOW_MS + lagMs + grant.lifetimeS * 1000
    t.ok(believedEndOnProviderClockMs < (NOW_S + 7200) * 1000, `provider ${lagMs} ms into the stamped second`)
  }
})
