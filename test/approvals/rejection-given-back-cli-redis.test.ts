/**
 * SPEC §11 (round 5, issue 56): `approvals reject` (the built dist-bundle/cli.mjs) beside a running
 * sidecar, both on a real Redis: the command gives the amount back itself through the shared day
 * totals, under the name the sidecar's worker gives it back with, before it prints the rejection, so
 * a payout of the same amount sent the moment it exits is never refused, 50 times in a row.
 */
import t from 'tap'
import { startRedis } from '../helpers/redis-server.js'
import { startApprovalsRig } from './approvals-harness.js'
import { cliRejectionsThenPayouts, commandEnv, RUNS } from './rejection-runs.js'

// Fifty starts of the command, each connecting to Redis: about 2 minutes alone, 7 with two suites and
// more beside it on 2 cores (400 s was not enough there). A hang still ends the file.
t.setTimeout(900_000)

t.test(`redis: a payout sent right after \`approvals reject\` exits is judged with the amount back, ${RUNS} times in a row`, async (t) => {
  const redis = await startRedis(t)
  const { proxy, storePath } = await startApprovalsRig(t, { PROXY_REDIS_URL: redis.url })
  await cliRejectionsThenPayouts(t, proxy, { ...commandEnv(storePath), PROXY_REDIS_URL: redis.url })
})
