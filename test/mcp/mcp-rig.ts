/**
 * The MCP tests' setting (SPEC §13): a proxy with PROXY_MCP=on in front of the fake provider, a
 * callers file of agents with different rules (one whose payouts above 100 KES wait for a person,
 * one that may only read transactions, one with no rule, an approver, a rate-limited one and a
 * key-less one), approvals in a real SQLite file, and agents connected with the official client.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Test } from 'tap'
import { Client, StreamableHTTPClientTransport, type CallToolResult } from '@modelcontextprotocol/client'
import { keySha256 } from '../../src/callers/judge-caller.js'
import type { Env } from '../../src/load-config.js'
import type { FakeProvider } from '../../src/fake-provider/index.js'
import type { ServerDeps } from '../../src/server.js'
import { eventually } from '../helpers/eventually.js'
import { providerEnv, startProvider, startProxy, waitReady, type RunningProxy } from '../helpers/harness.js'

export const KEYS = {
  agent: 'pak_mcp-agent-key-0123456789abcdefghijklmnopqrstuv',
  reader: 'pak_mcp-reader-key-0123456789abcdefghijklmnopqrstu',
  idle: 'pak_mcp-idle-key-0123456789abcdefghijklmnopqrstuvw',
  treasurer: 'pak_mcp-treasurer-key-0123456789abcdefghijklmnopq',
  limited: 'pak_mcp-limited-key-0123456789abcdefghijklmnopqrs',
  fenced: 'pak_mcp-fenced-key-0123456789abcdefghijklmnopqrstu',
} as const
export type AgentName = keyof typeof KEYS

export const SIGNING_SECRET = `whsec_${Buffer.alloc(32, 9).toString('base64')}`
export const SEALING_SECRET = `whsec_${Buffer.alloc(32, 11).toString('base64')}`

export function callersYaml (): string {
  return `callers:
  - id: payout-agent
    keySha256: ${keySha256(KEYS.agent)}
    allow:
      - { environments: [sandbox], interfaces: [fiat], methods: [GET, POST], paths: ["/payouts/**", "/transactions/*"] }
    amountLimits:
      - paths: ["/payouts/**"]
        amount: /amount
        currency: /currency
        perRequest: { KES: 400 }
        perDay: { KES: 100000 }
        approveAbove: { KES: 100 }
  - id: reader
    keySha256: ${keySha256(KEYS.reader)}
    allow: [{ interfaces: [fiat], methods: [GET], paths: ["/transactions/**"] }]
  - id: idle
    keySha256: ${keySha256(KEYS.idle)}
    allow: []
  - id: treasurer
    keySha256: ${keySha256(KEYS.treasurer)}
    approver: true
    allow: [{ environments: [sandbox], interfaces: [fiat], methods: [GET], paths: ["/balances"] }]
  - id: limited
    keySha256: ${keySha256(KEYS.limited)}
    allow: [{ environments: [sandbox], interfaces: [fiat], methods: [GET] }]
    rateLimit: { requests: 2, perSeconds: 60 }
  - id: fenced
    keySha256: ${keySha256(KEYS.fenced)}
    sources: [10.9.0.0/16]
    allow: [{ environments: [sandbox] }]
`
}

export const TOOLS_YAML = `tools:
  - name: get_transaction
    title: Look up a transaction
    description: Reads one transaction by its id.
    environment: sandbox
    interface: fiat
    method: GET
    path: /transactions/{transactionId}
    input:
      type: object
      properties:
        transactionId: { type: string, description: the provider's transaction id }
      required: [transactionId]
  - name: send_payout
    title: Send a payout
    description: Sends a mobile money payout.
    environment: sandbox
    interface: fiat
    method: POST
    path: /payouts
    input:
      type: object
      properties:
        body:
          type: object
          properties:
            amount: { type: [number, string] }
            currency: { type: string }
            externalReference: { type: string, minLength: 1 }
          required: [amount, currency, externalReference]
      required: [body]
  - name: crypto_balance
    title: A crypto read no test caller may make
    description: Reads a crypto wallet.
    interface: crypto
    method: GET
    path: /wallets/{walletId}
    input:
      type: object
      properties:
        walletId: { type: string }
      required: [walletId]
`

export interface McpRig { provider: FakeProvider, proxy: RunningProxy, dir: string }

export function tempDir (t: Test): string {
  const dir = mkdtempSync(join(tmpdir(), 'pap-mcp-'))
  t.teardown(() => { rmSync(dir, { recursive: true, force: true }) })
  return dir
}

export async function startMcpRig (t: Test, options: { env?: Env, tools?: string | null, deps?: Partial<ServerDeps> } = {}): Promise<McpRig> {
  const provider = await startProvider(t)
  const dir = tempDir(t)
  const callersFile = join(dir, 'callers.yaml')
  writeFileSync(callersFile, callersYaml())
  const env: Record<string, string> = {
    PROXY_CALLERS_FILE: callersFile,
    PROXY_APPROVAL_SIGNING_SECRET: SIGNING_SECRET,
    PROXY_APPROVAL_SEALING_SECRET: SEALING_SECRET,
    PROXY_WEBHOOK_STORE_PATH: join(dir, 'webhooks.db'),
    PROXY_MCP: 'on',
    PROXY_DEFAULT_ENVIRONMENT: 'sandbox',
  }
  const tools = options.tools === undefined ? TOOLS_YAML : options.tools
  if (tools !== null) {
    env['PROXY_MCP_TOOLS_FILE'] = join(dir, 'tools.yaml')
    writeFileSync(join(dir, 'tools.yaml'), tools)
  }
  const proxy = await startProxy(t, providerEnv(provider, { ...env, ...options.env }), options.deps)
  await waitReady(proxy)
  await eventually(() => proxy.store.status().ready, { what: 'the state store', timeoutMs: 5000 })
  return { provider, proxy, dir }
}

/** An agent connected with the official client (2026-07-28 by default; `legacy` speaks the 2025 handshake). */
export async function connect (t: Test, proxy: Pick<RunningProxy, 'url'>, key: string | null, mode: 'auto' | 'legacy' = 'auto'): Promise<Client> {
  const client = new Client({ name: 'test-agent', version: '1.0.0' }, { versionNegotiation: { mode } })
  const headers: Record<string, string> = key === null ? {} : { authorization: `Bearer ${key}` }
  await client.connect(new StreamableHTTPClientTransport(new URL(`${proxy.url}/mcp`), { requestInit: { headers } }))
  t.teardown(() => client.close())
  return client
}

export async function call (client: Client, name: string, args: Record<string, unknown>): Promise<CallToolResult & { structuredContent: Record<string, unknown> }> {
  const result = await client.callTool({ name, arguments: args })
  return result as CallToolResult & { structuredContent: Record<string, unknown> }
}

/** What the fake provider received below a path: method, raw target and body text. */
export function received (provider: FakeProvider, fragment: string): Array<{ method: string, url: string, body: string }> {
  return provider.upstreamRequests.filter((r) => r.url.includes(fragment)).map((r) => ({ method: r.method, url: r.url, body: r.body.toString('utf8') }))
}

/** A tool error as SPEC §13 shapes it: isError, the status and the contract's error body, the same as JSON in the first text block. */
export function assertToolError (t: Test, result: CallToolResult & { structuredContent: Record<string, unknown> }, status: number, code: string, label = code): { code: string, message: string } {
  t.equal(result.isError, true, `${label}: a tool error`)
  t.equal(result.structuredContent['status'], status, `${label}: status ${status}`)
  const error = (result.structuredContent['body'] as { error?: { code: string, message: string } } | null)?.error
  t.equal(error?.code, code, `${label}: code`)
  t.same(JSON.parse((result.content[0] as { text: string }).text), result.structuredContent, `${label}: the first text block is the structured content`)
  return error ?? { code: '', message: '' }
}
