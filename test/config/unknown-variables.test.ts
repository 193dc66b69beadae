/**
 * Issue 35 item 8: unknown PAYMENTS_ and PROXY_ variables stop the start with the name they most
 * likely meant (env-schema would drop them silently), unless PROXY_ALLOW_UNKNOWN_VARIABLES=true;
 * and a bad base URL is not also reported as "no environment configured".
 */
import t from 'tap'
import { loadConfig, type Env } from '../../src/load-config.js'
import { findUnknownVariables } from '../../src/config/unknown-variables.js'
import { KNOWN_VARIABLES } from '../../src/config/schema.js'
import { problemsOf } from '../helpers/config-problems.js'

const base: Env = {
  PAYMENTS_FIAT_BASE_URL: 'https://fiat.example.com/api/b2b',
  PAYMENTS_SANDBOX_API_KEY: 'HC_marker_api_key_Zq83',
  PAYMENTS_SANDBOX_PUBLIC_KEY: 'pk_marker_public_Zq83',
}

t.test('a misspelt setting is refused, naming the setting it most likely meant', async (t) => {
  const cases: Array<[string, Env, string]> = [
    ['a dropped letter in a key', { PAYMENTS_SANDBOX_API_KEY: undefined, PAYMENTS_SANBOX_API_KEY: 'HC_marker_api_key_Zq83' }, 'PAYMENTS_SANBOX_API_KEY is not a known setting: did you mean PAYMENTS_SANDBOX_API_KEY?'],
    ['a dropped plural', { PROXY_EXPECTED_EGRESS_IP: '203.0.113.7' }, 'PROXY_EXPECTED_EGRESS_IP is not a known setting: did you mean PROXY_EXPECTED_EGRESS_IPS?'],
    ['a dropped unit', { PROXY_UPSTREAM_TIMEOUT: '5' }, 'PROXY_UPSTREAM_TIMEOUT is not a known setting: did you mean PROXY_UPSTREAM_TIMEOUT_SECONDS?'],
    ['swapped letters that end like a service link', { PROXY_PROT: '8081' }, 'PROXY_PROT is not a known setting: did you mean PROXY_PORT?'],
    ['a _FILE form of a setting that has none', { PROXY_CALLERS_FILE_FILE: '/x' }, 'PROXY_CALLERS_FILE_FILE is not a known setting: did you mean PROXY_CALLERS_FILE?'],
    ['nothing close', { PROXY_COMPLETELY_DIFFERENT_THING: 'x' }, 'PROXY_COMPLETELY_DIFFERENT_THING is not a known setting'],
  ]
  for (const [label, env, expected] of cases) {
    const problems = problemsOf({ ...base, ...env })
    const line = problems.find((p) => p.startsWith(expected))
    t.ok(line !== undefined, `${label}: ${problems.join(' | ')}`)
    t.match(line ?? '', /set PROXY_ALLOW_UNKNOWN_VARIABLES=true to start anyway\)$/, `${label}: the escape is named`)
    t.notMatch(problems.join('\n'), 'HC_marker_api_key_Zq83', `${label}: no value is echoed`)
  }
  t.match(problemsOf({ ...base, PROXY_COMPLETELY_DIFFERENT_THING: 'x' }), [/is not a known setting \(/], 'no suggestion when nothing is close')
})

t.test('PROXY_ALLOW_UNKNOWN_VARIABLES=true turns them into warnings', async (t) => {
  const { warnings } = loadConfig({ ...base, PROXY_EXPECTED_EGRESS_IP: '203.0.113.7', PROXY_ALLOW_UNKNOWN_VARIABLES: 'true' })
  t.same(warnings, ['PROXY_EXPECTED_EGRESS_IP is not a known setting: did you mean PROXY_EXPECTED_EGRESS_IPS? (ignored: PROXY_ALLOW_UNKNOWN_VARIABLES=true)'])
  t.match(problemsOf({ ...base, PROXY_ALLOW_UNKNOWN_VARIABLES: 'yes' }), ['PROXY_ALLOW_UNKNOWN_VARIABLES must be one of true, false'])
})

t.test('every name in the schema is known, _FILE forms included; other prefixes and Kubernetes service links are not ours', async (t) => {
  t.same(findUnknownVariables(KNOWN_VARIABLES, KNOWN_VARIABLES), [])
  t.ok(KNOWN_VARIABLES.has('PAYMENTS_SANDBOX_API_KEY_FILE') && KNOWN_VARIABLES.has('PROXY_REDIS_URL_FILE'))
  const links = ['PAYMENTS_APP_SERVICE_HOST', 'PAYMENTS_APP_SERVICE_PORT', 'PAYMENTS_APP_SERVICE_PORT_HTTP', 'PAYMENTS_APP_PORT', 'PAYMENTS_APP_PORT_8080_TCP', 'PAYMENTS_APP_PORT_8080_TCP_ADDR', 'PROXY_CACHE_PORT_3128_TCP_PROTO']
  t.same(findUnknownVariables([...links, 'HTTP_PROXY', 'NODE_ENV', 'LOG_FORMAT'], KNOWN_VARIABLES), [])
})

t.test('a bad base URL is one problem, not also "no environment configured"', async (t) => {
  const problems = problemsOf({ ...base, PAYMENTS_FIAT_BASE_URL: 'ftp://fiat.example.com/api/b2b' })
  t.equal(problems.length, 1, problems.join(' | '))
  t.match(problems[0], /^PAYMENTS_FIAT_BASE_URL /)
  t.match(problemsOf({ PAYMENTS_FIAT_BASE_URL: 'https://fiat.example.com/api/b2b' }), [/^no environment configured/], 'still said when no key is set at all')
})
