/**
 * PROXY_CONSOLE_* (SPEC §14) read into the console's settings: off unless PROXY_CONSOLE_LISTEN is
 * set, the public URL an origin (its default the listen address), approvers as addresses or
 * *@domain, cookies Secure unless the listener is loopback; every problem names its variable.
 */
import t from 'tap'
import { loadConfig, type Env } from '../../src/load-config.js'
import { DEFAULT_CONSOLE_USER_HEADER } from '../../src/config/schema.js'
import { problemsOf } from '../helpers/config-problems.js'

const base: Env = { PAYMENTS_FIAT_BASE_URL: 'https://api.example.com/api/b2b', PAYMENTS_SANDBOX_API_KEY: 'HC_k', PAYMENTS_SANDBOX_PUBLIC_KEY: 'pk_k', PROXY_EGRESS_IP_URL: 'off' }

t.test('off without PROXY_CONSOLE_LISTEN, with a warning when other console settings are given', async (t) => {
  t.equal(loadConfig(base).config.console, null)
  const { config, warnings } = loadConfig({ ...base, PROXY_CONSOLE_APPROVERS: 'ann@example.com' })
  t.equal(config.console, null)
  t.match(warnings.join('\n'), /PROXY_CONSOLE_APPROVERS set but PROXY_CONSOLE_LISTEN is not/)
})

t.test('the defaults: loopback clients, no trusted proxy, x-forwarded-email, the public URL from the listen address, no Secure on loopback', async (t) => {
  const { config, warnings } = loadConfig({ ...base, PROXY_CONSOLE_LISTEN: '127.0.0.1:8090' })
  t.match(config.console, {
    listen: { host: '127.0.0.1', port: 8090 }, publicUrl: 'http://127.0.0.1:8090', trustedProxies: [], userHeader: DEFAULT_CONSOLE_USER_HEADER, approvers: [], secureCookies: false, storePath: './data/webhooks.db',
    detailPointers: ['/payoutMethod/accountName', '/payoutMethod/accountNumber', '/payoutMethod/code', '/recipient', '/narration', '/description', '/country'],
  })
  t.same(config.console?.allowedClients.map((c) => `${c.address}/${c.prefix}`), ['127.0.0.0/8', '::1/128'])
  t.match(warnings.join('\n'), /PROXY_CONSOLE_APPROVERS is empty: everyone who signs in to the console sees it read-only/)
  t.equal(loadConfig({ ...base, PROXY_CONSOLE_LISTEN: '[::1]:8090' }).config.console?.publicUrl, 'http://[::1]:8090')
})

t.test('cookies are Secure when the listener is not loopback, or the public URL is https', async (t) => {
  const secure = (env: Env): boolean | undefined => loadConfig({ ...base, ...env }).config.console?.secureCookies
  t.equal(secure({ PROXY_CONSOLE_LISTEN: '10.0.0.5:8090', PROXY_CONSOLE_PUBLIC_URL: 'http://console.internal:8090' }), true)
  t.equal(secure({ PROXY_CONSOLE_LISTEN: '127.0.0.1:8090', PROXY_CONSOLE_PUBLIC_URL: 'https://console.example.com' }), true)
  t.equal(secure({ PROXY_CONSOLE_LISTEN: '127.0.0.1:8090' }), false)
})

t.test('the public URL is kept as an origin; approvers lower case', async (t) => {
  const { config } = loadConfig({ ...base, PROXY_CONSOLE_LISTEN: '0.0.0.0:8090', PROXY_CONSOLE_PUBLIC_URL: 'https://Console.Example.com/', PROXY_CONSOLE_APPROVERS: 'Ann@Example.com, *@finance.example.com', PROXY_CONSOLE_USER_HEADER: 'X-Auth-Request-Email' })
  t.equal(config.console?.publicUrl, 'https://console.example.com')
  t.same(config.console?.approvers, ['ann@example.com', '*@finance.example.com'])
  t.equal(config.console?.userHeader, 'x-auth-request-email')
})

t.test('every problem names its variable', async (t) => {
  const table: Array<[Env, RegExp]> = [
    [{ PROXY_CONSOLE_LISTEN: 'localhost:8090' }, /PROXY_CONSOLE_LISTEN must be <IP address>:<port>/],
    [{ PROXY_CONSOLE_LISTEN: '0.0.0.0:8090' }, /PROXY_CONSOLE_PUBLIC_URL is required when PROXY_CONSOLE_LISTEN is on every address/],
    [{ PROXY_CONSOLE_LISTEN: '127.0.0.1:8090', PROXY_CONSOLE_PUBLIC_URL: 'https://console.example.com/console' }, /PROXY_CONSOLE_PUBLIC_URL must be an http:\/\/ or https:\/\/ origin without a path/],
    [{ PROXY_CONSOLE_LISTEN: '127.0.0.1:8090', PROXY_CONSOLE_PUBLIC_URL: 'ftp://console.example.com' }, /PROXY_CONSOLE_PUBLIC_URL must be/],
    [{ PROXY_CONSOLE_LISTEN: '127.0.0.1:8090', PROXY_CONSOLE_PUBLIC_URL: 'https://u:p@console.example.com' }, /PROXY_CONSOLE_PUBLIC_URL must be/],
    [{ PROXY_CONSOLE_LISTEN: '127.0.0.1:8090', PROXY_CONSOLE_APPROVERS: 'ann, *@*.example.com' }, /PROXY_CONSOLE_APPROVERS: "ann" is neither an email address nor \*@<domain>/],
    [{ PROXY_CONSOLE_LISTEN: '127.0.0.1:8090', PROXY_CONSOLE_ALLOWED_CLIENTS: '10.0.0.0/33' }, /PROXY_CONSOLE_ALLOWED_CLIENTS: "10.0.0.0\/33" is not a CIDR/],
    [{ PROXY_CONSOLE_LISTEN: '127.0.0.1:8090', PROXY_CONSOLE_TRUSTED_PROXIES: 'proxy' }, /PROXY_CONSOLE_TRUSTED_PROXIES: "proxy" is not a CIDR/],
    [{ PROXY_CONSOLE_LISTEN: '127.0.0.1:8090', PROXY_CONSOLE_USER_HEADER: 'x email' }, /PROXY_CONSOLE_USER_HEADER/],
    [{ PROXY_CONSOLE_LISTEN: '127.0.0.1:8090', PROXY_CONSOLE_DETAIL_POINTERS: '/recipient,narration' }, /PROXY_CONSOLE_DETAIL_POINTERS: "narration" is not a JSON Pointer/],
    [{ PROXY_CONSOLE_LISTEN: '127.0.0.1:8090', PROXY_CONSOLE_DETAIL_POINTERS: '/a~2' }, /PROXY_CONSOLE_DETAIL_POINTERS: "\/a~2" is not a JSON Pointer/],
  ]
  for (const [env, problem] of table) t.match(problemsOf({ ...base, ...env }).join('\n'), problem, JSON.stringify(env))
})
