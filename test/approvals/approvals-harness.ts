/**
 * The approvals tests' setting: the doc's worked example (an agent that pays up to 100 KES alone,
 * needs a person above it, at most 400 a request and 500 a UTC day), an approver, and a proxy with
 * its approvals in a real SQLite file, in front of the fake provider.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Test } from 'tap'
import { keySha256 } from '../../src/callers/judge-caller.js'
import type { Env } from '../../src/load-config.js'
import type { FakeProvider } from '../../src/fake-provider/index.js'
import { eventually } from '../helpers/eventually.js'
import { providerEnv, startProvider, startProxy, waitReady, type RunningProxy } from '../helpers/harness.js'
import type { ServerDeps } from '../../src/server.js'

export const AGENT_KEY = 'pak_approvals-agent-key-0123456789abcdefghijklmn'
export const APPROVER_KEY = 'pak_approvals-approver-key-0123456789abcdefghijk'
export const SIGNING_SECRET = `whsec_${Buffer.alloc(32, 7).toString('base64')}`
export const SEALING_SECRET = `whsec_${Buffer.alloc(32, 9).toString('base64')}`

/** The agent's KES limits: 400 a request and 500 a day unless told otherwise; a person decides above 100. */
export function approvalsCallersFile (dir: string, agentLimits: { perRequest: number, perDay: number } = { perRequest: 400, perDay: 500 }): string {
  const file = join(dir, 'callers.yaml')
  writeFileSync(file, `callers:
  - id: payout-agent
    keySha256: ${keySha256(AGENT_KEY)}
    allow: [{ environments: [sandbox], interfaces: [fiat], methods: [POST, GET], paths: ["/payouts/**"] }]
    amountLimits:
      - paths: ["/payouts/**"]
        amount: /amount
        currency: /currency
        perRequest: { KES: ${agentLimits.perRequest} }
        perDay: { KES: ${agentLimits.perDay} }
        approveAbove: { KES: 100 }
  - id: treasurer
    keySha256: ${keySha256(APPROVER_KEY)}
    approver: true
    allow: [{ environments: [sandbox], interfaces: [fiat], methods: [POST], paths: ["/payouts/**"] }]
    amountLimits:
      - amount: /amount
        currency: /currency
        perRequest: { KES: 1000 }
        approveAbove: { KES: 100 }
`)
  return file
}

export interface ApprovalsRig { provider: FakeProvider, proxy: RunningProxy, dir: string, storePath: string }

export function tempDir (t: Test): string {
  const dir = mkdtempSync(join(tmpdir(), 'pap-approvals-'))
  t.teardown(() => { rmSync(dir, { recursive: true, force: true }) })
  return dir
}

export async function startApprovalsRig (t: Test, env: Env = {}, deps: Partial<ServerDeps> = {}): Promise<ApprovalsRig> {
  const provider = await startProvider(t)
  const dir = tempDir(t)
  const storePath = join(dir, 'webhooks.db')
  const proxy = await startProxy(t, providerEnv(provider, {
    PROXY_CALLERS_FILE: approvalsCallersFile(dir),
    PROXY_APPROVAL_SIGNING_SECRET: SIGNING_SECRET,
    PROXY_APPROVAL_SEALING_SECRET: SEALING_SECRET,
    PROXY_WEBHOOK_STORE_PATH: storePath,
    ...env,
  }), deps)
  await waitReady(proxy)
  // With Redis, the shared store connects in the background: a first request before would get 503.
  await eventually(() => proxy.store.status().ready, { what: 'the state store', timeoutMs: 5000 })
  return { provider, proxy, dir, storePath }
}

export function payouts (provider: FakeProvider): Array<{ body: string }> {
  return provider.upstreamRequests.filter((r) => r.url.includes('/payouts')).map((r) => ({ body: r.body.toString('utf8') }))
}

export async function pay (proxy: RunningProxy, body: unknown, key = AGENT_KEY): Promise<Response> {
  return await fetch(`${proxy.url}/sandbox/fiat/payouts`, {
    method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: typeof body === 'string' ? body : JSON.stringify(body),
  })
}

export async function decide (proxy: RunningProxy, id: string, verb: 'approve' | 'reject', body: unknown = { by: 'Ann' }, key = APPROVER_KEY): Promise<Response> {
  return await fetch(`${proxy.url}/approvals/${id}/${verb}`, {
    method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify(body),
  })
}

export async function look (proxy: RunningProxy, path: string, key = AGENT_KEY): Promise<Response> {
  return await fetch(`${proxy.url}${path}`, { headers: { authorization: `Bearer ${key}` } })
}

export interface HeldAnswer { approval: { id: string, status: string, expiresAt: number, [field: string]: unknown } }
