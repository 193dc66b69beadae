/**
 * SPEC §11 (round 5, issue 56): `approvals reject` (the built dist-bundle/cli.mjs) beside a running
 * sidecar whose day totals live in its memory: the command waits for the sidecar to have given the
 * amount back before it prints the rejection, so a payout of the same amount sent the moment it exits
 * is never refused, 50 times in a row; with no sidecar running it says, after 5 s, that none did.
 * With Redis: rejection-given-back-cli-redis.test.ts.
 */
import t from 'tap'
import { runCli } from '../helpers/child-proxy.js'
import { pay, startApprovalsRig } from './approvals-harness.js'
import { cliRejectionsThenPayouts, commandEnv, RUNS } from './rejection-runs.js'

// Fifty starts of the command, each waiting for the sidecar's look: about 2 minutes alone, 7 with two
// suites and more beside it on 2 cores (400 s was not enough there). A hang still ends the file.
t.setTimeout(900_000)

t.test(`memory: a payout sent right after \`approvals reject\` exits is judged with the amount back, ${RUNS} times in a row`, async (t) => {
  const { proxy, storePath } = await startApprovalsRig(t)
  await cliRejectionsThenPayouts(t, proxy, commandEnv(storePath))
})

t.test('memory: with no sidecar running, `approvals reject` waits 5 s, then says no sidecar gave the amount back and the next start gives it back', async (t) => {
  const { proxy, storePath } = await startApprovalsRig(t)
  const answer = await pay(proxy, { amount: '300', currency: 'KES', externalReference: 'no-sidecar' })
  const { approval } = await answer.json() as { approval: { id: string } }
  await proxy.app.close()
  const started = performance.now()
  const child = runCli(t, ['approvals', 'reject', approval.id, '--by', 'Ann'], commandEnv(storePath))
  const { code } = await child.exited
  const tookMs = performance.now() - started
  t.equal(code, 0, 'the rejection is taken: it is final')
  t.match(JSON.parse(child.stdout()), { id: approval.id, status: 'rejected' })
  t.match(child.stderr(), new RegExp(`no running sidecar gave the amount of ${approval.id} back to the day's total within 5 s .*; the next start of the sidecar gives it back`))
  t.ok(tookMs >= 5000, `waited the 5 s (${Math.round(tookMs)} ms)`)
})
