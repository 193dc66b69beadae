/**
 * SPEC §11 crash safety and the command line, on the real built process (`dist-bundle/cli.mjs`), as
 * scenarios that crash-safety.test.ts runs with the embedded store and crash-safety-redis.test.ts
 * with Redis (approvals, §8 records and day totals there; one file each, so each stays within the
 * runner's per-file timeout): killed with SIGKILL while an approval is pending, or while the
 * approved request's answer is outstanding, the sidecar loses nothing after a restart on the same
 * store, and sends once (again only when the answer was outstanding, with the same reference,
 * logged as a resend).
 *
 * With Redis the killed process's §8 in-flight mark outlives it (a replica cannot tell a dead
 * sender from a slow one), so the resend waits for the mark to expire: the first process gets short
 * token and upstream timeouts here, which is what the mark's lifetime is made of.
 */
import type { Test } from 'tap'
import { join } from 'node:path'
import { Redis } from 'ioredis'
import { DEFAULT_REDIS_KEY_PREFIX } from '../../src/config/schema.js'
import { inFlightTtlMs } from '../../src/idempotency/idempotency-plugin.js'
import { listeningPort, runCli, type Child } from '../helpers/child-proxy.js'
import { eventually } from '../helpers/eventually.js'
import { providerEnv, startProvider } from '../helpers/harness.js'
import { startRedis } from '../helpers/redis-server.js'
import { afterPasses, passesAt } from '../helpers/worker-passes.js'
import { AGENT_KEY, SEALING_SECRET, SIGNING_SECRET, approvalsCallersFile, payouts, tempDir, type HeldAnswer } from './approvals-harness.js'

const held = { amount: '300', currency: 'KES', externalReference: 'crash-1', recipient: '+254700000042' }

async function startSidecar (t: Test, env: Record<string, string | undefined>): Promise<{ child: Child, url: string }> {
  const child = runCli(t, [], env)
  await child.waitFor(/payments-auth-proxy listening/)
  const url = `http://127.0.0.1:${listeningPort(child)}`
  // Redis connects in the background: a request before would get 503 STATE_UNAVAILABLE.
  await eventually(async () => ((await (await fetch(`${url}/readyz`)).json()) as { state?: { ready: boolean } }).state?.ready !== false, { what: 'the state store', detail: () => child.stdout() })
  return { child, url }
}

async function kill (child: Child): Promise<void> {
  child.process.kill('SIGKILL')
  await child.exited
}

async function command (t: Test, args: string[], env: Record<string, string | undefined>): Promise<{ code: number | null, out: string, err: string }> {
  const child = runCli(t, ['approvals', ...args], env)
  const { code } = await child.exited
  return { code, out: child.stdout(), err: child.stderr() }
}

async function hold (url: string): Promise<string> {
  const res = await fetch(`${url}/sandbox/fiat/payouts`, { method: 'POST', headers: { authorization: `Bearer ${AGENT_KEY}` }, body: JSON.stringify(held) })
  if (res.status !== 202) throw new Error(`not held: ${res.status}`)
  return ((await res.json()) as HeldAnswer).approval.id
}

/** Deletes §8's held marks, as a Redis written by a version before them holds none. */
async function forgetHeldMarks (url: string): Promise<number> {
  const redis = new Redis(url)
  try {
    const marks = await redis.keys(`${DEFAULT_REDIS_KEY_PREFIX}h:*`)
    return marks.length === 0 ? 0 : await redis.del(...marks)
  } finally {
    redis.disconnect()
  }
}

export type Kind = 'embedded' | 'redis'

async function setting (t: Test, kind: Kind): Promise<{ env: Record<string, string | undefined>, provider: Awaited<ReturnType<typeof startProvider>> }> {
  const provider = await startProvider(t)
  const dir = tempDir(t)
  const redis = kind === 'redis' ? { PROXY_REDIS_URL: (await startRedis(t)).url } : {}
  const env = { ...providerEnv(provider), PROXY_CALLERS_FILE: approvalsCallersFile(dir), PROXY_APPROVAL_SIGNING_SECRET: SIGNING_SECRET, PROXY_APPROVAL_SEALING_SECRET: SEALING_SECRET, PROXY_WEBHOOK_STORE_PATH: join(dir, 'webhooks.db'), LOG_LEVEL: 'info', ...redis }
  return { env, provider }
}

/** Short enough that the killed process's in-flight mark expires within the test; long enough that its send is still outstanding at the kill. */
const SHORT_TIMEOUTS = { PROXY_TOKEN_TIMEOUT_SECONDS: '1', PROXY_UPSTREAM_TIMEOUT_SECONDS: '3' }
const SHORT_MARK_MS = inFlightTtlMs({ token: { timeoutS: 1 }, upstream: { timeoutS: 3 } } as Parameters<typeof inFlightTtlMs>[0])

export function crashScenarios (t: Test, kind: Kind): void {
  t.test(`${kind}: killed while pending and approved with the CLI while down: sent once at the next start`, async (t) => {
    const { env, provider } = await setting(t, kind)
    const first = await startSidecar(t, env)
    const id = await hold(first.url)
    await kill(first.child)

    const listed = await command(t, ['list', '--status', 'pending', '--json'], env)
    t.equal(listed.code, 0)
    t.match(JSON.parse(listed.out.trim()), { id, status: 'pending', amount: '300', currency: 'KES', externalReference: 'crash-1' }, 'the held request survived the kill')
    const approved = await command(t, ['approve', id, '--by', 'Ann'], env)
    t.equal(approved.code, 0, approved.err)
    t.match(JSON.parse(approved.out), { id, status: 'approved', decidedBy: 'Ann', decidedByCaller: 'cli' })
    const again = await command(t, ['reject', id, '--by', 'Bob'], env)
    t.equal(again.code, 1)
    t.match(again.err, /APPROVAL_ALREADY_DECIDED/)
    t.same(payouts(provider), [], 'nothing sent while the sidecar was down')

    const second = await startSidecar(t, env)
    await eventually(() => payouts(provider).length === 1, { what: 'the approved payout sent at the next start', timeoutMs: 10_000, detail: () => second.child.stdout() })
    // The log line comes through a pipe, which may trail the payout itself.
    await second.child.waitFor(new RegExp(`"approval":"${id}"[^\\n]*"decidedBy":"Ann","decidedByCaller":"cli"[^\\n]*"msg":"approval approved"`))
    t.equal(payouts(provider)[0]?.body, JSON.stringify(held))
    await eventually(async () => (await fetch(`${second.url}/sandbox/fiat/payouts`, { method: 'POST', headers: { authorization: `Bearer ${AGENT_KEY}` }, body: JSON.stringify(held) })).headers.get('idempotent-replayed') === 'true', { what: 'the agent\'s retry answered from the record' })
    // The forward loop looks every second and sends what it finds: two more looks had their chance to send it again.
    await afterPasses(passesAt(second.url, 'approvals_forward'), { what: 'the forward loop' })
    t.equal(payouts(provider).length, 1, 'sent once')
    t.notOk(second.child.stdout().includes('resent'), 'not a resend')
    for (const child of [first.child, second.child]) {
      for (const secret of [SIGNING_SECRET, AGENT_KEY, ...provider.issuedTokens]) t.notOk(`${child.stdout()}${child.stderr()}`.includes(secret), 'no secret in the process\'s output')
    }
  })

  t.test(`${kind}: killed while pending: after the restart the agent's retry finds the same approval, not a second hold`, async (t) => {
    const { env, provider } = await setting(t, kind)
    const first = await startSidecar(t, env)
    const id = await hold(first.url)
    await kill(first.child)
    // The memory store's marks died with the process; with Redis they are deleted, as a Redis written
    // before held marks existed has none: either way only the restart's own writing of them is left.
    if (env.PROXY_REDIS_URL !== undefined) t.equal(await forgetHeldMarks(env.PROXY_REDIS_URL), 1, 'the held mark, deleted')

    const second = await startSidecar(t, env)
    // The gauge is set at the end of the worker's first look, which writes the marks before anything else.
    await eventually(async () => /approvals_pending 1/.test(await (await fetch(`${second.url}/metrics`)).text()), { what: 'the first look', detail: () => second.child.stdout() })
    t.equal(await hold(second.url), id, 'the retry is answered by the approval held before the kill')
    const listed = await command(t, ['list', '--json'], env)
    t.equal(listed.out.trim().split('\n').length, 1, 'one approval: the reference was not held a second time')
    t.same(payouts(provider), [], 'nothing sent')
  })

  t.test(`${kind}: approved with the CLI while running: sent within 2 s; killed while its answer is outstanding: resent once after the restart, logged as a resend`, async (t) => {
    const { env, provider } = await setting(t, kind)
    let answering = false
    provider.setUpstreamHandler((req) => {
      // Hang the first send: the provider's answer is outstanding when the kill comes.
      return req.url?.includes('/payouts') === true && !answering
    })
    const first = await startSidecar(t, kind === 'redis' ? { ...env, ...SHORT_TIMEOUTS } : env)
    const id = await hold(first.url)
    t.equal((await command(t, ['approve', id, '--by', 'Ann'], env)).code, 0)
    // From the command's exit, when the decision is stored: its own start takes seconds on a busy machine.
    const decidedAt = Date.now()
    await eventually(() => payouts(provider).length === 1, { what: 'the send', timeoutMs: 5_000 })
    const sentAt = Date.now()
    t.ok(sentAt - decidedAt < 2_000, 'acted on within 2 s of the decision')
    await kill(first.child)

    answering = true
    const second = await startSidecar(t, env)
    await eventually(() => payouts(provider).length === 2, { what: 'the resend', timeoutMs: 10_000 + (kind === 'redis' ? SHORT_MARK_MS : 0), detail: () => second.child.stdout() })
    // The mark was set before the send: the resend cannot come sooner than its lifetime after the send, less the send's own few ms.
    if (kind === 'redis') t.ok(Date.now() - sentAt >= SHORT_MARK_MS - 1000, 'not resent while the killed process\'s in-flight mark lived')
    await second.child.waitFor(/approved request resent: its answer was outstanding when the process stopped/)
    t.match(second.child.stdout(), new RegExp(`"approval":"${id}"[^\n]*approved request resent`), 'logged as a resend, with the approval id')
    t.same(payouts(provider).map((p) => JSON.parse(p.body) as unknown), [held, held], 'the same request, with the same reference')
    await afterPasses(passesAt(second.url, 'approvals_forward'), { what: 'the forward loop' })
    t.equal(payouts(provider).length, 2, 'resent once')
  })
}
