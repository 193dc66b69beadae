import t from 'tap'
import { checkApprovalStart } from '../../src/approvals/approval-start-checks.js'
import { parseCallersText } from '../../src/callers/callers-file.js'
import type { CallerSpec } from '../../src/callers/callers-file.js'
import type { Config } from '../../src/config/config.js'

function callersOf (approver: boolean, approveAbove: boolean): CallerSpec[] {
  const load = parseCallersText(`callers:
  - id: agent
    keySha256: ${'a'.repeat(64)}
    approver: ${approver}
    allow: [{}]
    amountLimits:
      - amount: /amount
        currency: /currency
        perRequest: { KES: 1000 }
${approveAbove ? '        approveAbove: { KES: 100 }\n' : ''}`, '.yaml')
  if (!load.ok) throw new Error(load.problems.join('\n'))
  return load.callers
}

type Facts = Pick<Config, 'approvals' | 'idempotency'>
const base: Facts = { approvals: { ttlS: 86400, signingSecret: 'whsec_x', sealingSecret: 'whsec_y', storePath: ':memory:', notifyUrl: null, retryScheduleMs: [5000] }, idempotency: { enabled: true, keyPointer: '/externalReference', ttlS: 86400 } }

t.test('approval start checks', async (t) => {
  const cases: Array<[string, CallerSpec[], Facts, { used: boolean, problems: RegExp[], warnings: RegExp[] }]> = [
    ['no approveAbove: nothing to set up, nothing required', callersOf(false, false), { ...base, approvals: { ...base.approvals, signingSecret: null, sealingSecret: null }, idempotency: { ...base.idempotency, enabled: false } }, { used: false, problems: [], warnings: [] }],
    ['approveAbove with everything', callersOf(false, true), base, { used: true, problems: [], warnings: [] }],
    ['without the signing secret', callersOf(false, true), { ...base, approvals: { ...base.approvals, signingSecret: null } }, { used: true, problems: [/^PROXY_APPROVAL_SIGNING_SECRET .*required/], warnings: [] }],
    ['without the sealing secret', callersOf(false, true), { ...base, approvals: { ...base.approvals, sealingSecret: null } }, { used: true, problems: [/^PROXY_APPROVAL_SEALING_SECRET .*required/], warnings: [] }],
    ['with PROXY_IDEMPOTENCY=off', callersOf(false, true), { ...base, idempotency: { ...base.idempotency, enabled: false } }, { used: true, problems: [/^PROXY_IDEMPOTENCY=off/], warnings: [] }],
    ['an approver limited by approveAbove', callersOf(true, true), base, { used: true, problems: [], warnings: [/caller agent is an approver and is limited by approveAbove/] }],
  ]
  for (const [name, callers, config, expected] of cases) {
    const check = checkApprovalStart(callers, config)
    t.equal(check.used, expected.used, `${name}: used`)
    t.equal(check.problems.length, expected.problems.length, `${name}: problems`)
    expected.problems.forEach((p, i) => { t.match(check.problems[i], p, name) })
    t.equal(check.warnings.length, expected.warnings.length, `${name}: warnings`)
    expected.warnings.forEach((w, i) => { t.match(check.warnings[i], w, name) })
  }
})
