/**
 * Exchanges one environment's API Key + Public Key for a Bearer token (SPEC §1). The API key goes
 * to this URL only; a dispatcher's request() follows no redirect, so a 3xx is a failure and the key
 * never travels to the `Location` host (Node's fetch would resend it).
 */
import type { Dispatcher } from 'undici'
import type { Clock } from '../clock.js'
import type { EnvironmentConfig } from '../config/config.js'
import { parseTokenResponse } from './token-response.js'
import { TokenRequestError, type TokenGrant } from './token-grant.js'

/** A token answer is about 300 bytes; anything far larger is not one, and is not read. */
const MAX_RESPONSE_BYTES = 64 * 1024

export interface TokenClientOptions {
  dispatcher: Dispatcher
  clock: Clock
  timeoutMs: number
  maxLifetimeS: number
}

export type FetchToken = (environment: EnvironmentConfig, signal?: AbortSignal) => Promise<TokenGrant>

export function createTokenClient (options: TokenClientOptions): FetchToken {
  const { dispatcher, clock, timeoutMs, maxLifetimeS } = options
  return async function fetchToken (environment, signal) {
    const sentMonoMs = clock.monotonicMs()
    const timeout = AbortSignal.timeout(timeoutMs)
    const abort = signal === undefined ? timeout : AbortSignal.any([timeout, signal])
    let response: Dispatcher.ResponseData
    try {
      const { origin, pathname, search } = new URL(environment.tokenUrl)
      response = await dispatcher.request({
        origin,
        path: pathname + search,
        method: 'POST',
        headers: {
          'api-key': environment.credentials.apiKey,
          'content-type': 'application/json',
          accept: 'application/json',
        },
        body: JSON.stringify({ publicKey: environment.credentials.publicKey }),
        headersTimeout: timeoutMs,
        bodyTimeout: timeoutMs,
        signal: abort,
      })
    } catch (err) {
      throw failure(err, timeout)
    }
    const { statusCode, headers } = response
    const contentType = headerValue(headers['content-type'])
    // What a failure may log about the answer: never its body, which could hold a token.
    const facts = { status: statusCode, contentType, length: headerValue(headers['content-length']) }
    if (statusCode >= 300 && statusCode < 400) {
      // destroy() emits an abort error on the body; unheard, it would crash the process.
      response.body.on('error', () => {})
      response.body.destroy()
      throw new TokenRequestError('redirect', `token endpoint answered a redirect (HTTP ${statusCode}); redirects are never followed`, facts)
    }
    let body: string | null
    try {
      body = await readLimited(response.body, MAX_RESPONSE_BYTES)
    } catch (err) {
      throw failure(err, timeout)
    }
    if (body === null) throw new TokenRequestError('too_large', `token endpoint answered more than ${MAX_RESPONSE_BYTES} bytes`, facts)
    return parseTokenResponse(
      { statusCode, contentType, date: headerValue(headers.date), body },
      { receivedWallMs: clock.wallMs(), sentMonoMs, maxLifetimeS },
    )
  }
}

function failure (err: unknown, timeout: AbortSignal): TokenRequestError {
  const code = (err as { code?: unknown }).code
  if (timeout.aborted || code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_BODY_TIMEOUT' || code === 'UND_ERR_CONNECT_TIMEOUT') {
    return new TokenRequestError('timeout', 'token endpoint did not answer in time (PROXY_TOKEN_TIMEOUT_SECONDS)', {}, err)
  }
  return new TokenRequestError('network', 'token endpoint could not be reached', { code: typeof code === 'string' ? code : undefined }, err)
}

/** The body as text, or null (and the rest left unread) once it passes `limit` bytes. */
async function readLimited (body: Dispatcher.ResponseData['body'], limit: number): Promise<string | null> {
  const chunks: Buffer[] = []
  let size = 0
  for await (const chunk of body) {
    size += (chunk as Buffer).length
    if (size > limit) {
      body.destroy()
      return null
    }
    chunks.push(chunk as Buffer)
  }
  return Buffer.concat(chunks).toString('utf8')
}

function headerValue (value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value
}
