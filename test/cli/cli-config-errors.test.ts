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

t.test('unknown commands exit 2 with the usage', async (t) => {
  const child = runCli(t, ['frobnicate'], {})
  t.equal((await child.exited).code, 2)
  t.match(child.stderr(), /usage: payments-auth-proxy/)
})
