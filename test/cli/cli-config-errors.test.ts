import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t from 'tap'
import { runCli } from '../helpers/child-proxy.js'

t.test('invalid configuration stops the process with one line per problem and no secret', async (t) => {
  const secret = 'HC_cli_marker_secret_3141'
  const child = runCli(t, [], {
    PAYMENTS_FIAT_BASE_URL: 'not a url',
    PAYMENTS_PRODUCTION_API_KEY: secret,
    PROXY_PORT: 'eighty',
  })
  const { code } = await child.exited
  t.equal(code, 1)
  const err = child.stderr()
  t.match(err, /invalid configuration/)
  t.match(err, /- PROXY_PORT must be integer/)
  t.match(err, /- PAYMENTS_FIAT_BASE_URL must be an absolute http\(s\) URL/)
  t.match(err, /- PAYMENTS_PRODUCTION_PUBLIC_KEY is missing/)
  t.notOk((err + child.stdout()).includes(secret), 'the API key is never printed')
})

t.test('invalid values in .env stop the process like invalid variables: one line per problem, no stack, no secret', async (t) => {
  const secret = 'HC_cli_marker_secret_2718'
  const dir = mkdtempSync(join(tmpdir(), 'pap-cli-dotenv-'))
  writeFileSync(join(dir, '.env'), [
    'PAYMENTS_FIAT_BASE_URL=https://fiat.example.com/api/b2b',
    `PAYMENTS_SANDBOX_API_KEY=${secret}`,
    'PAYMENTS_SANDBOX_PUBLIC_KEY=pk_cli_marker',
    'PROXY_PORT=abc',
    'PROXY_DEFAULT_ENVIRONMENT=',
    `PROXY_HOST=${secret}`,
    '',
  ].join('\n'))
  const child = runCli(t, [], { LOG_LEVEL: 'loud' }, dir)
  const { code } = await child.exited
  t.equal(code, 1)
  const err = child.stderr()
  t.same(err.split('\n').filter((l) => l !== ''), [
    'payments-auth-proxy: invalid configuration (nothing was started)',
    '  - PROXY_PORT must be integer',
    '  - LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent',
    '  - PROXY_HOST must be an IP address to listen on (e.g. 127.0.0.1, or 0.0.0.0 in a container)',
  ])
  t.notOk((err + child.stdout()).includes(secret), 'the API key is never printed')
})

t.test('unknown commands exit 2 with the usage', async (t) => {
  const child = runCli(t, ['frobnicate'], {})
  t.equal((await child.exited).code, 2)
  t.match(child.stderr(), /usage: payments-auth-proxy/)
})
