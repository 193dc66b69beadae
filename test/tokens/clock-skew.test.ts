import t, { type Test } from 'tap'
import type { TimeDriver } from './time-driver.js'
import { send, startTimed, type TimedSetup } from './token-kit.js'

const HOUR_MS = 3_600_000
const RUN_MS = 5 * HOUR_MS
const STEP_MS = 5 * 60_000
// 2 h tokens believed 7199 s, refreshed 300 s before: start-up + one refresh every 6899 s.
const EXPECTED_TOKEN_REQUESTS = 1 + Math.floor(RUN_MS / 6_899_000)

/** Sends a request every 5 simulated minutes for 5 hours, calling `at` before each. */
async function run (t: Test, { driver, proxy }: TimedSetup, at: (elapsedMs: number) => void = () => {}): Promise<void> {
  for (let elapsed = 0; elapsed < RUN_MS; elapsed += STEP_MS) {
    at(elapsed)
    const res = await send(proxy, '/sandbox/fiat/v1/a')
    if (res.status !== 200) t.fail(`request at ${elapsed / 60_000} min answered ${res.status}`)
    await driver.advance(STEP_MS)
  }
}

for (const [name, offsetMs] of [['an hour ahead of', HOUR_MS], ['an hour behind', -HOUR_MS]] as const) {
  t.test(`with the provider clock ${name} ours, no expired token is sent and there is no storm`, async (t) => {
    const setup = await startTimed(t, { providerNow: (driver) => () => driver.wallMs() + offsetMs })
    await run(t, setup)
    const { provider } = setup
    t.equal(provider.upstreamRequests.length, RUN_MS / STEP_MS, 'every request reached the upstream')
    t.ok(provider.upstreamRequests.every((r) => r.tokenValid), 'every upstream request carried a token valid by the provider clock')
    t.equal(provider.tokenRequests.length, EXPECTED_TOKEN_REQUESTS, 'one token request per refresh interval, as without skew')
  })
}

t.test('wall-clock jumps of +3 h and -3 h on our side change neither validity nor the refresh schedule', async (t) => {
  // The provider's clock follows real elapsed time: it does not see our jumps.
  const providerNow = (driver: TimeDriver): () => number => {
    const wall0 = driver.wallMs()
    const mono0 = driver.monotonicMs()
    return () => wall0 + driver.monotonicMs() - mono0
  }
  const setup = await startTimed(t, { providerNow })
  const jumps = new Map([[HOUR_MS, 3 * HOUR_MS], [2 * HOUR_MS, -3 * HOUR_MS], [3 * HOUR_MS, -3 * HOUR_MS]])
  await run(t, setup, (elapsed) => { const jump = jumps.get(elapsed); if (jump !== undefined) setup.driver.fake.jumpWall(jump) })
  const { provider } = setup
  t.ok(provider.upstreamRequests.every((r) => r.tokenValid), 'every upstream request carried a valid token')
  t.equal(provider.tokenRequests.length, EXPECTED_TOKEN_REQUESTS, 'the refresh schedule is the same as without jumps')
  const gaps = provider.tokenRequests.slice(1).map((r, i) => r.at - (provider.tokenRequests[i]?.at ?? 0))
  t.same(gaps, gaps.map(() => 6_899_000), 'refreshes 6899 s apart on the provider clock')
})
