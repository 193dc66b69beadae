/**
 * Which tools a caller sees (SPEC §13), as a pure function over its allow rules, table-tested:
 * `payments_request` with any rule; an operator tool when one rule could permit its environment
 * (its own, or the default one for a short route), interface, method and path; the approval and
 * payment look-ups while their feature is on (offered by approvals/ and payments/), whatever the
 * rules. Also the settings' checks.
 */
import t from 'tap'
import type { ApprovalStore } from '../../src/approvals/approval-store.js'
import { approvalTools } from '../../src/approvals/approval-tools.js'
import type { RecordVerifier } from '../../src/approvals/record-verifier.js'
import { validateCallers, type CallerSpec } from '../../src/callers/callers-file.js'
import { systemClock } from '../../src/clock.js'
import { ConfigError } from '../../src/config/config-error.js'
import { loadConfig } from '../../src/load-config.js'
import { buildCatalogue, toolsFor } from '../../src/mcp/tool-catalogue.js'
import { validateTools } from '../../src/mcp/tools-file.js'
import { PAYMENT_TOOLS } from '../../src/payments/payment-tools.js'

const KEY = 'a'.repeat(64)
function caller (allow: unknown[]): CallerSpec {
  const load = validateCallers({ callers: [{ id: 'c', keySha256: KEY, allow }] })
  if (!load.ok) throw new Error(load.problems.join('; '))
  return load.callers[0] as CallerSpec
}
const tool = (name: string, over: Record<string, unknown>): Record<string, unknown> => ({
  name, title: name, description: name, interface: 'fiat', method: 'GET', path: '/transactions/{id}', input: { type: 'object', properties: { id: { type: 'string' } }, required: ['id'] }, ...over,
})
const operator = validateTools({
  tools: [
    tool('tx_any_env', {}),
    tool('tx_sandbox', { environment: 'sandbox' }),
    tool('payout', { environment: 'sandbox', method: 'POST', path: '/payouts', input: { type: 'object', properties: { body: {} } } }),
    tool('crypto_wallet', { interface: 'crypto', path: '/wallets/{id}' }),
  ],
}, { allowDots: false })
if (!operator.ok) throw new Error(operator.problems.join('; '))
// Listed, never called here.
const APPROVAL_TOOLS = approvalTools({ store: {} as ApprovalStore, verifier: {} as RecordVerifier, clock: systemClock })

t.test('a caller sees the request tools its rules could permit', async (t) => {
  const catalogue = buildCatalogue(operator.tools, [])
  const names = (allow: unknown[], defaultEnvironment: 'sandbox' | 'production' | null = 'sandbox'): string[] => toolsFor(caller(allow), catalogue, defaultEnvironment).map((x) => x.listing.name)
  const cases: Array<[string, unknown[], string[], ('sandbox' | 'production' | null)?]> = [
    ['no rule at all', [], []],
    ['every request', [{}], ['payments_request', 'tx_any_env', 'tx_sandbox', 'payout', 'crypto_wallet']],
    ['sandbox fiat GET of transactions', [{ environments: ['sandbox'], interfaces: ['fiat'], methods: ['GET'], paths: ['/transactions/*'] }], ['payments_request', 'tx_any_env', 'tx_sandbox']],
    ['the same, production only: a tool without an environment goes to the default one', [{ environments: ['production'], interfaces: ['fiat'], methods: ['GET'], paths: ['/transactions/*'] }], ['payments_request']],
    ['production, with production the default', [{ environments: ['production'], methods: ['GET'], paths: ['/transactions/**'] }], ['payments_request', 'tx_any_env'], 'production'],
    ['no default environment: a short-route tool needs both', [{ environments: ['sandbox'], methods: ['GET'] }], ['payments_request', 'tx_sandbox'], null],
    ['POST only', [{ methods: ['POST'] }], ['payments_request', 'payout']],
    ['a path no tool takes', [{ paths: ['/balances'] }], ['payments_request']],
    ['a literal id: admitted for that value', [{ paths: ['/transactions/t-1'] }], ['payments_request', 'tx_any_env', 'tx_sandbox']],
    ['crypto', [{ interfaces: ['crypto'] }], ['payments_request', 'crypto_wallet']],
    ['two rules together', [{ methods: ['POST'], paths: ['/payouts'] }, { interfaces: ['crypto'], methods: ['GET'] }], ['payments_request', 'payout', 'crypto_wallet']],
  ]
  for (const [name, allow, expected, defaultEnvironment] of cases) t.same(names(allow, defaultEnvironment), expected, name)
})

t.test('the look-ups are listed while their feature is on, to any caller; never a tool that decides', async (t) => {
  const none = caller([])
  t.same(toolsFor(none, buildCatalogue([], APPROVAL_TOOLS), 'sandbox').map((x) => x.listing.name), ['get_approval', 'list_approvals'])
  t.same(toolsFor(none, buildCatalogue([], PAYMENT_TOOLS), 'sandbox').map((x) => x.listing.name), ['get_payment', 'list_payments'])
  const all = buildCatalogue(operator.tools, [...APPROVAL_TOOLS, ...PAYMENT_TOOLS]).map((x) => x.listing)
  t.same(all.filter((l) => /approv|decid|reject/i.test(`${l.name} ${l.title}`)).map((l) => l.name), ['get_approval', 'list_approvals'])
  for (const listing of all.filter((l) => l.name.startsWith('get_') || l.name.startsWith('list_'))) t.equal(listing.annotations?.readOnlyHint, true, `${listing.name} is read-only`)
})

t.test('a feature\'s tool is listed only under a name no tools file may take', async (t) => {
  const [offered] = PAYMENT_TOOLS
  if (offered === undefined) throw new Error('payments offer no tool')
  t.throws(() => buildCatalogue([], [{ ...offered, listing: { ...offered.listing, name: 'get_refund' } }]), { message: /^get_refund: not among BUILT_IN_TOOL_NAMES/ })
  t.same(validateTools({ tools: [tool(offered.listing.name, {})] }, { allowDots: false }), { ok: false, problems: [`tools[0].name: "${offered.listing.name}" is a tool of the proxy's own`] })
})

t.test('settings: PROXY_MCP=on needs a callers file; a tools file without MCP is a warning', async (t) => {
  const base = { PAYMENTS_FIAT_BASE_URL: 'https://api.example.com/api/b2b', PAYMENTS_SANDBOX_API_KEY: 'HC_k', PAYMENTS_SANDBOX_PUBLIC_KEY: 'pk_k', PROXY_EGRESS_IP_URL: 'off' }
  const refused = ((): unknown => { try { return loadConfig({ ...base, PROXY_MCP: 'on' }) } catch (err) { return err } })()
  t.ok(refused instanceof ConfigError)
  t.same((refused as ConfigError).problems, ['PROXY_MCP=on needs PROXY_CALLERS_FILE: agents over MCP are identified by their caller key (SPEC §13)'])
  t.match(loadConfig({ ...base, PROXY_MCP_TOOLS_FILE: '/tmp/tools.yaml' }), { config: { mcp: { enabled: false, toolsFile: '/tmp/tools.yaml' } }, warnings: ['PROXY_MCP_TOOLS_FILE is set but PROXY_MCP is off: the tools are not served'] })
  t.same(loadConfig(base).config.mcp, { enabled: false, toolsFile: null }, 'off by default')
  t.throws(() => loadConfig({ ...base, PROXY_MCP: 'yes' }), /PROXY_MCP must be one of on, off/)
})
