import t from 'tap'
import { loadConfig } from '../../src/load-config.js'
import { planRotation } from '../../src/ops/credential-rotation.js'

const base = {
  PAYMENTS_FIAT_BASE_URL: 'https://fiat.example.com/api/b2b',
  PAYMENTS_SANDBOX_API_KEY: 'HC_sandbox_1',
  PAYMENTS_SANDBOX_PUBLIC_KEY: 'pk_sandbox_1',
}
const config = (overrides: Record<string, string | undefined>) => loadConfig({ ...base, ...overrides }).config

t.test('planRotation: what a re-read configuration asks of the running one', async (t) => {
  const current = config({})
  const cases: Array<[string, Record<string, string | undefined>, string, string[]]> = [
    ['the same keys', {}, 'unchanged', []],
    ['a new API key', { PAYMENTS_SANDBOX_API_KEY: 'HC_sandbox_2' }, 'changed', ['sandbox']],
    ['a new public key', { PAYMENTS_SANDBOX_PUBLIC_KEY: 'pk_sandbox_2' }, 'changed', ['sandbox']],
    ['an environment enabled', { PAYMENTS_PRODUCTION_API_KEY: 'HC_p', PAYMENTS_PRODUCTION_PUBLIC_KEY: 'pk_p', PROXY_DEFAULT_ENVIRONMENT: 'sandbox' }, 'refused', []],
    ['another upstream', { PAYMENTS_FIAT_BASE_URL: 'https://elsewhere.example.com/api/b2b' }, 'refused', []],
  ]
  for (const [name, overrides, outcome, environments] of cases) {
    const plan = planRotation(current, config(overrides))
    t.equal(plan.outcome, outcome, name)
    if (plan.outcome === 'changed') t.same(plan.environments.map((e) => e.name), environments, `${name}: environments`)
  }
})
