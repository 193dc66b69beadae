/**
 * `payments-auth-proxy check` with payments on (SPEC §6, §12), on the built CLI: the look-up per
 * environment and interface (crypto settled by events alone without one), how final events are
 * confirmed, and the payments' store, reached without writing to it; Redis never by its URL.
 */
import t from 'tap'
import { existsSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { runCli } from '../helpers/child-proxy.js'
import { providerEnv, startProvider } from '../helpers/harness.js'
import { startRedis } from '../helpers/redis-server.js'
import { payout, SEALING_SECRET, setting, SIGNING_SECRET, startSidecar, tempDir } from './payments-harness.js'

async function check (t: Parameters<typeof runCli>[0], env: Record<string, string | undefined>): Promise<{ code: number | null, out: string }> {
  const child = runCli(t, ['check'], env)
  const { code } = await child.exited
  return { code, out: child.stdout() + child.stderr() }
}

t.test('the look-up paths per environment and interface, the confirmation, and the embedded store beside a running sidecar', async (t) => {
  const { provider, env } = await setting(t)
  const sidecar = await startSidecar(t, env)
  t.equal((await payout(sidecar.url, { amount: 1, currency: 'KES', externalReference: 'check-1' })).status, 200)
  const { code, out } = await check(t, env)
  t.equal(code, 0, out)
  t.match(out, `ok    payments: fiat look-up: production GET ${provider.fiatBaseUrl}/transactions/{transactionId}`)
  t.match(out, `ok    payments: fiat look-up: sandbox GET ${provider.fiatSandboxBaseUrl}/transactions/{transactionId}`)
  t.match(out, 'ok    payments: crypto has no look-up path (PROXY_PAYMENTS_CRYPTO_LOOKUP_PATH unset): crypto payments are settled by events alone')
  t.match(out, 'warn  payments: an event alone settles crypto payments (PROXY_PAYMENTS_CRYPTO_LOOKUP_PATH unset): a forged event would too, so they are notified with "confirmed": false')
  t.notMatch(out, 'an event alone settles fiat', 'fiat payments are confirmed by a look-up')
  t.match(out, 'ok    payments: a final event settles a payment once a look-up agrees (PROXY_PAYMENTS_CONFIRM=lookup)')
  t.match(out, `ok    payments store: ${env.PROXY_WEBHOOK_STORE_PATH ?? ''} opens, 1 pending, 0 stale`)

  const byEvents = await check(t, { ...env, PROXY_PAYMENTS_CONFIRM: 'event', PROXY_PAYMENTS_CRYPTO_LOOKUP_PATH: '/v1/transactions/{externalReference}' })
  t.match(byEvents.out, `ok    payments: crypto look-up: production GET ${provider.cryptoBaseUrl}/v1/transactions/{externalReference}`)
  for (const iface of ['fiat', 'crypto']) t.match(byEvents.out, `warn  payments: an event alone settles ${iface} payments (PROXY_PAYMENTS_CONFIRM=event)`)
  t.match(byEvents.out, /warn {2}payments: events alone settle payments \(PROXY_PAYMENTS_CONFIRM=event\) but the provider's events are not signed with HMAC/)
})

t.test('a store that cannot be created fails check and is not created; without the inbox, check says so', async (t) => {
  const provider = await startProvider(t)
  const dir = tempDir(t)
  const env = providerEnv(provider, { PROXY_PAYMENTS: 'on', PROXY_SEALING_SECRET: SEALING_SECRET, PROXY_PAYMENTS_NOTIFY_URL: 'http://127.0.0.1:9/n', PROXY_WEBHOOK_SIGNING_SECRET: SIGNING_SECRET })
  const later = join(dir, 'later', 'webhooks.db')
  const fresh = await check(t, { ...env, PROXY_WEBHOOK_STORE_PATH: later })
  t.equal(fresh.code, 0, fresh.out)
  t.match(fresh.out, `ok    payments store: ${later} is created at the sidecar's start (${dir} is writable)`)
  t.match(fresh.out, 'warn  payments: the webhook inbox is off (PROXY_WEBHOOK_LISTEN): payments are settled by answers and look-ups alone')
  t.notOk(existsSync(later))
  const notADir = join(dir, 'a-file')
  writeFileSync(notADir, 'x')
  const failed = await check(t, { ...env, PROXY_WEBHOOK_STORE_PATH: join(notADir, 'webhooks.db') })
  t.equal(failed.code, 1)
  t.match(failed.out, `FAIL  payments store: ${join(notADir, 'webhooks.db')} cannot be created: ${notADir} is not a writable directory (PROXY_WEBHOOK_STORE_PATH)`)
})

t.test('Redis: reported when it answers; when it is down, check fails without printing its URL', async (t) => {
  const provider = await startProvider(t)
  const redis = await startRedis(t, { password: 'payments-check-secret' })
  const env = providerEnv(provider, { PROXY_PAYMENTS: 'on', PROXY_SEALING_SECRET: SEALING_SECRET, PROXY_PAYMENTS_NOTIFY_URL: 'http://127.0.0.1:9/n', PROXY_WEBHOOK_SIGNING_SECRET: SIGNING_SECRET, PROXY_REDIS_URL: redis.url })
  const up = await check(t, env)
  t.equal(up.code, 0, up.out)
  t.match(up.out, 'ok    payments store: Redis answers, 0 pending, 0 stale')
  await redis.stop()
  const down = await check(t, env)
  t.equal(down.code, 1)
  t.match(down.out, 'FAIL  payments store: Redis did not answer')
  t.notOk(down.out.includes('payments-check-secret'), 'never the URL or its password')
})
