/**
 * docs/agents.md's worked example is this session: an agent with the shipped tools file
 * (deploy/mcp-tools.yaml) and the docs' callers file sends a payout above its approveAbove, learns
 * that a person decides, looks the approval up, and after a person approves over HTTP gets the
 * provider's answer by repeating the same call. The provider is the fake one, answering as the
 * provider's payout page shows. The test renders the session and compares it with the page (ids and
 * times normalised); `UPDATE_AGENT_SESSION=1` writes it there instead.
 */
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import t from 'tap'
import { keySha256 } from '../../src/callers/judge-caller.js'
import { eventually } from '../helpers/eventually.js'
import { providerEnv, startProvider, startProxy, waitReady } from '../helpers/harness.js'
import { SEALING_SECRET, SIGNING_SECRET, call, connect, tempDir } from './mcp-rig.js'

const AGENT_KEY = 'pak_docs-agent-key-0123456789abcdefghijklmnopqrstuv'
const TREASURER_KEY = 'pak_docs-treasurer-key-0123456789abcdefghijklmnopq'
const DOC = new URL('../../docs/agents.md', import.meta.url)
const BEGIN = '<!-- recorded session: begin (test/mcp/agent-session.test.ts writes and checks this part) -->'
const END = '<!-- recorded session: end -->'

/** The callers file docs/agents.md shows. */
function docsCallersFile (agentKeySha256: string, treasurerKeySha256: string): string {
  return `callers:
  - id: payout-agent
    keySha256: ${agentKeySha256}
    allow:
      - { environments: [sandbox], interfaces: [fiat], methods: [POST], paths: ["/fiat/payout"] }
      - { environments: [sandbox], interfaces: [fiat], methods: [GET], paths: ["/transactions/*"] }
    requireExternalReference: true
    amountLimits:
      - paths: ["/fiat/payout"]
        amount: /amount
        currency: /currency
        perRequest: { KES: 5000 }
        perDay: { KES: 20000 }
        approveAbove: { KES: 1000 }
  - id: treasurer
    keySha256: ${treasurerKeySha256}
    approver: true
    allow: []
`
}

t.test('the worked example of docs/agents.md is a real session', async (t) => {
  const provider = await startProvider(t)
  provider.setUpstreamHandler((req, res, body) => {
    const reply = (value: unknown): true => { res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(value)); return true }
    if (req.method === 'POST' && req.url?.endsWith('/fiat/payout') === true) {
      const sent = JSON.parse(body.toString('utf8')) as Record<string, unknown>
      return reply({ success: true, message: 'Payout initiated successfully.', data: { transactionId: 'txn_8c1f2e', status: 'pending', amount: sent['amount'], currency: sent['currency'], externalReference: sent['externalReference'] } })
    }
    if (req.method === 'GET' && req.url?.endsWith('/transactions/txn_8c1f2e') === true) {
      return reply({ success: true, data: { transactionId: 'txn_8c1f2e', status: 'successful', externalReference: 'payout-2026-0042' } })
    }
    return false
  })
  const dir = tempDir(t)
  writeFileSync(join(dir, 'callers.yaml'), docsCallersFile(keySha256(AGENT_KEY), keySha256(TREASURER_KEY)))
  const proxy = await startProxy(t, providerEnv(provider, {
    PROXY_CALLERS_FILE: join(dir, 'callers.yaml'),
    PROXY_MCP: 'on',
    PROXY_MCP_TOOLS_FILE: new URL('../../deploy/mcp-tools.yaml', import.meta.url).pathname,
    PROXY_DEFAULT_ENVIRONMENT: 'sandbox',
    PROXY_APPROVAL_SIGNING_SECRET: SIGNING_SECRET, PROXY_APPROVAL_SEALING_SECRET: SEALING_SECRET,
    PROXY_WEBHOOK_STORE_PATH: join(dir, 'webhooks.db'),
  }))
  await waitReady(proxy)
  const agent = await connect(t, proxy, AGENT_KEY)
  const parts: string[] = []
  const json = (value: unknown): string => `\`\`\`json\n${JSON.stringify(value, null, 2)}\n\`\`\``

  const { tools } = await agent.listTools()
  parts.push('**1. The agent lists its tools** (`tools/list`): the payout and the look-up of the shipped tools file that its rules could permit, `payments_request`, and the approval look-ups. The crypto wallet tools are not listed: no rule of this caller permits crypto.',
    json(tools.map((tool) => ({ name: tool.name, title: tool.title }))))

  const payout = { body: { amount: 2500, currency: 'KES', country: 'KE', externalReference: 'payout-2026-0042', destination: 'MoMo', payoutMethod: { accountName: 'Jane Wanjiru', accountNumber: '254712345678', code: 'MPESA' } } }
  const held = await call(agent, 'send_payout', payout)
  t.equal(held.structuredContent['status'], 202)
  t.notOk(held.isError)
  t.same(provider.upstreamRequests.filter((r) => r.url.includes('/fiat/payout')), [], 'nothing sent while held')
  const approvalId = (held.structuredContent['approval'] as { id: string }).id
  parts.push('**2. It sends a payout of 2,500 KES** (`tools/call send_payout`), above the 1,000 KES its caller may pay alone:', json(payout),
    'The result is not an error: status 202 with the approval, and nothing was sent. `structuredContent` (the first text block holds the same):', json(held.structuredContent),
    'and the second text block tells the agent what to do next:', `> ${(held.content[1] as { text: string }).text}`)

  const pending = await call(agent, 'get_approval', { id: approvalId })
  parts.push('**3. It looks the approval up** (`tools/call get_approval`):', json({ id: approvalId }), json(pending.structuredContent))

  const decided = await fetch(`${proxy.url}/approvals/${approvalId}/approve`, { method: 'POST', headers: { authorization: `Bearer ${TREASURER_KEY}`, 'content-type': 'application/json' }, body: JSON.stringify({ by: 'Ann (treasury)', reason: 'invoice 2026-0042 checked' }) })
  t.equal(decided.status, 200)
  parts.push('**4. A person approves it**, outside MCP (no tool can): here over HTTP with the treasurer\'s key; the CLI (`payments-auth-proxy approvals approve <id> --by ...`) or the console do the same. The proxy then sends the stored request, unchanged.',
    `\`\`\`sh\ncurl -X POST http://127.0.0.1:8080/approvals/${approvalId}/approve \\\n  -H "Authorization: Bearer $TREASURER_KEY" -H 'Content-Type: application/json' \\\n  -d '{"by": "Ann (treasury)", "reason": "invoice 2026-0042 checked"}'\n\`\`\``)
  await eventually(() => provider.upstreamRequests.some((r) => r.url.includes('/fiat/payout')), { what: 'the approved payout sent', timeoutMs: 5000 })

  let answer = held
  await eventually(async () => {
    answer = await call(agent, 'send_payout', payout)
    return answer.structuredContent['replayed'] === true
  }, { what: 'the provider\'s recorded answer', timeoutMs: 5000 })
  parts.push('**5. It repeats the same call** (the same `externalReference`, the same body) and gets the provider\'s answer, recorded when the approved payout was sent (`replayed`: nothing was sent again):', json(answer.structuredContent))
  t.equal(provider.upstreamRequests.filter((r) => r.url.includes('/fiat/payout')).length, 1, 'sent once')

  const final = await call(agent, 'get_transaction', { transactionId: 'txn_8c1f2e' })
  parts.push('**6. The payout is pending until the provider says otherwise; it looks the transaction up** (`tools/call get_transaction`):', json({ transactionId: 'txn_8c1f2e' }), json(final.structuredContent))

  const rendered = normalise(parts.join('\n\n'), approvalId)
  const page = readFileSync(DOC, 'utf8')
  const begin = page.indexOf(BEGIN)
  const end = page.indexOf(END)
  t.ok(begin !== -1 && end > begin, 'docs/agents.md has the recorded session markers')
  if (process.env['UPDATE_AGENT_SESSION'] === '1') {
    writeFileSync(DOC, `${page.slice(0, begin + BEGIN.length)}\n\n${rendered}\n\n${page.slice(end)}`)
    t.pass('docs/agents.md rewritten')
    return
  }
  t.equal(page.slice(begin + BEGIN.length, end).trim(), rendered, 'docs/agents.md shows this session (UPDATE_AGENT_SESSION=1 rewrites it)')
})

/** The approval's random id and the times of this run, as the page shows them. */
function normalise (text: string, approvalId: string): string {
  return text.replaceAll(approvalId, 'apr_Qm4tX9vKc2LwB7nR1yHs0A')
    .replace(/"expiresAt": \d+/g, '"expiresAt": 1790006400')
    .replace(/\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z/g, '2026-09-21T16:00:00.000Z')
}
