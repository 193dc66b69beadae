/**
 * Request handling of the fiat and crypto servers: the token endpoint (fiat only), payouts and
 * look-ups when transactions are on (transactions.ts), and an authenticated echo standing in for
 * every other API operation. The echo reports exactly what
 * arrived (raw path and query, headers, body digest) so tests can check what the proxy forwarded.
 */

import type http from 'node:http'
import { createHash } from 'node:crypto'
import { readBody, sendJson } from './http-io.js'
import type { RequestHandler } from './http-io.js'
import { resolveTarget, TOKEN_PATH } from './paths.js'
import type { RequestTarget } from './paths.js'
import type { TokenIssuer } from './token-issuer.js'
import type {
  ProviderCredentials, ProviderEnvironment, ProviderInterface, TokenHandler, TokenRequestRecord, Transactions,
  UpstreamHandler, UpstreamRequestRecord,
} from './types.js'

/** Bigger bodies are still digested, just not echoed back verbatim. */
const ECHO_BODY_LIMIT = 64 * 1024

/** Shared, mutable state of one fake provider; the settings change at run time through its API. */
export interface ApiState {
  now: () => number
  credentials: Record<ProviderEnvironment, ProviderCredentials>
  issuer: TokenIssuer
  tokenRequests: TokenRequestRecord[]
  upstreamRequests: UpstreamRequestRecord[]
  ipAllowlistEnforced: boolean
  tokenHandler: TokenHandler | null
  upstreamHandler: UpstreamHandler | null
  /** Payouts and look-ups, when turned on (transactions.ts); otherwise the echo answers them. */
  transactions: Transactions
}

export function createApiHandler (server: ProviderInterface, state: ApiState): RequestHandler {
  return async (req, res) => {
    const rawUrl = req.url ?? ''
    const body = await readBody(req)
    const target = resolveTarget(server, rawUrl)
    if (target.environment === null) {
      state.upstreamRequests.push(record(server, null, req, body, false))
      sendJson(res, 404, { success: false, message: 'Not found' })
    } else if (server === 'fiat' && target.path === TOKEN_PATH) {
      await handleTokenRequest(state, target.environment, req, res, body.toString('utf8'))
    } else {
      await handleApiRequest(state, server, { ...target, environment: target.environment }, req, res, body)
    }
  }
}

async function handleTokenRequest (
  state: ApiState, environment: ProviderEnvironment, req: http.IncomingMessage, res: http.ServerResponse, body: string,
): Promise<void> {
  state.tokenRequests.push({ environment, method: req.method ?? '', url: req.url ?? '', headers: req.headers, body, at: state.now() })
  if (state.tokenHandler !== null && await state.tokenHandler(req, res, body)) return
  if (req.method !== 'POST') {
    sendJson(res, 405, { success: false, message: 'Method not allowed' }, { allow: 'POST' })
    return
  }
  let parsed: unknown
  try {
    parsed = JSON.parse(body)
  } catch {
    sendJson(res, 400, { success: false, message: 'Malformed JSON body' })
    return
  }
  const expected = state.credentials[environment]
  const publicKey = typeof parsed === 'object' && parsed !== null ? (parsed as Record<string, unknown>).publicKey : undefined
  if (req.headers['api-key'] !== expected.apiKey || publicKey !== expected.publicKey) {
    sendJson(res, 401, { success: false, message: 'Invalid API key' })
    return
  }
  const { token, expiresAt } = state.issuer.issueOrRetrieve(environment)
  sendJson(res, 200, { success: true, token, expiresAt })
}

async function handleApiRequest (
  state: ApiState, server: ProviderInterface, target: RequestTarget & { environment: ProviderEnvironment },
  req: http.IncomingMessage, res: http.ServerResponse, body: Buffer,
): Promise<void> {
  const { environment, path, query } = target
  const token = /^Bearer (.+)$/i.exec(req.headers.authorization ?? '')?.[1]
  const tokenValid = token !== undefined && state.issuer.isValid(environment, token)
  state.upstreamRequests.push(record(server, environment, req, body, tokenValid))
  if (state.upstreamHandler !== null && await state.upstreamHandler(req, res, body)) return
  if (!tokenValid) {
    sendJson(res, 401, { success: false, message: 'Unauthorized' })
    return
  }
  if (state.ipAllowlistEnforced && server === 'fiat' && environment === 'production') {
    sendJson(res, 403, { success: false, code: 'IP_NOT_ALLOWED', message: 'Request IP is not in the allowlist' })
    return
  }
  if (state.transactions.handle(server, environment, req.method ?? '', path, body, res)) return
  sendJson(res, 200, {
    success: true,
    environment,
    interface: server,
    method: req.method,
    path,
    query,
    headers: req.headers,
    bodyLength: body.length,
    bodySha256: createHash('sha256').update(body).digest('hex'),
    body: body.length <= ECHO_BODY_LIMIT ? body.toString('utf8') : null,
  }, {
    'x-fake-upstream': server,
    // Lets tests check that response headers, cookies included, pass through the proxy.
    'set-cookie': 'fake=1; HttpOnly',
  })
}

function record (
  server: ProviderInterface,
  environment: ProviderEnvironment | null,
  req: http.IncomingMessage,
  body: Buffer,
  tokenValid: boolean,
): UpstreamRequestRecord {
  return { server, environment, method: req.method ?? '', url: req.url ?? '', headers: req.headers, body, tokenValid }
}
