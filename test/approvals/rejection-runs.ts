/**
 * The round the rejection tests share (SPEC §11, round 5): the rig's agent may send 500 KES a day,
 * a person decides above 100, and 300 KES is held. A rejection, then at once a payout of the same
 * 300 with a new reference: within the day's total only if the rejected 300 is back (600 > 500
 * otherwise). That payout is held in turn and the next to be rejected, 50 times.
 */
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { Test } from 'tap'
import { runCli } from '../helpers/child-proxy.js'
import { eventually } from '../helpers/eventually.js'
import type { RunningProxy } from '../helpers/harness.js'
import { pay, SEALING_SECRET, type HeldAnswer } from './approvals-harness.js'

export const RUNS = 50
const AMOUNT = '300'

async function held (proxy: RunningProxy, reference: string): Promise<{ status: number, id: string | null, code: string | null }> {
  const answer = await pay(proxy, { amount: AMOUNT, currency: 'KES', externalReference: reference })
  const body = await answer.json() as Partial<HeldAnswer> & { error?: { code: string } }
  return { status: answer.status, id: body.approval?.id ?? null, code: body.error?.code ?? null }
}

/** `reject` resolves once the channel under test has answered the rejection. */
export async function rejectionsThenPayouts (t: Test, proxy: RunningProxy, reject: (id: string) => Promise<void>): Promise<void> {
  const first = await held(proxy, 'round-0')
  if (first.id === null) throw new Error(`the first payout was not held: ${first.status} ${first.code ?? ''}`)
  let id = first.id
  const refused: number[] = []
  for (let run = 1; run <= RUNS; run++) {
    await reject(id)
    let next = await held(proxy, `round-${run}`)
    if (next.id === null) {
      refused.push(run)
      t.equal(next.code, 'AMOUNT_LIMIT_EXCEEDED', `run ${run}: refused, and only by the day's total`)
      // Counted, and the round goes on once the amount is back, so the count says how many of the 50.
      let attempt = 0
      await eventually(async () => { next = await held(proxy, `round-${run}-again-${++attempt}`); return next.id !== null }, { what: `the amount of run ${run} given back`, timeoutMs: 5000 })
    }
    id = next.id as string
  }
  t.same(refused, [], `never refused AMOUNT_LIMIT_EXCEEDED right after a rejection's answer (refused in ${refused.length} of ${RUNS})`)
}

/** The sidecar's own store and sealing secret, as an operator's shell beside it has them. */
export function commandEnv (storePath: string): Record<string, string> {
  return {
    PAYMENTS_FIAT_BASE_URL: 'http://127.0.0.1:1/api/b2b',
    PAYMENTS_SANDBOX_API_KEY: 'HC_sandbox-key-for-the-command',
    PAYMENTS_SANDBOX_PUBLIC_KEY: 'sandbox-public-key',
    PROXY_APPROVAL_SEALING_SECRET: SEALING_SECRET,
    PROXY_WEBHOOK_STORE_PATH: storePath,
  }
}

/** The round with each rejection taken by `approvals reject`, a process of its own, answered when it exits. */
export async function cliRejectionsThenPayouts (t: Test, proxy: RunningProxy, env: Record<string, string>): Promise<void> {
  await rejectionsThenPayouts(t, proxy, async (id) => {
    const child = runCli(t, ['approvals', 'reject', id, '--by', 'Ann', '--reason', 'not this one'], env)
    const { code } = await child.exited
    t.equal(code, 0, child.stderr())
    t.equal(child.stderr(), '', 'nothing to say: the amount is back')
    t.match(JSON.parse(child.stdout()) as unknown, { id, status: 'rejected', decidedByCaller: 'cli' })
  })
}

/**
 * Where notifications go (answered 204): with them on, a decision is first stored as one before the
 * worker gives the amount back, as an operator's setting has it, so the worker is never done by
 * the time a decision's answer is written.
 */
export async function notifyUrl (t: Test): Promise<string> {
  const receiver = createServer((_req, res) => { res.statusCode = 204; res.end() })
  await new Promise<void>((resolve) => { receiver.listen(0, '127.0.0.1', resolve) })
  t.teardown(() => { receiver.close() })
  return `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/approvals`
}
