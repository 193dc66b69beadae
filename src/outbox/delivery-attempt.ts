/**
 * One delivery attempt (SPEC §10): POST of the stored body byte for byte, with the stored
 * Content-Type and other headers (the provider's, for the inbox), and Standard Webhooks' `webhook-id`,
 * `webhook-timestamp` (this attempt's) and `webhook-signature`; a conflict carries `webhook-conflict`. The whole
 * attempt, answer and body, must fit in the delivery timeout. The answer's body is read and dropped.
 */
import type { Dispatcher } from 'undici'
import type { StoredEvent } from './outbox-store.js'
import type { AttemptAnswer } from './next-step.js'
import { signatureHeader } from './standard-webhooks.js'

export interface AttemptTarget {
  url: URL
  dispatcher: Dispatcher
  keys: readonly Buffer[]
  timeoutMs: number
}

export async function attemptDelivery (
  event: StoredEvent,
  target: AttemptTarget,
  nowS: number,
  signal: AbortSignal,
): Promise<AttemptAnswer> {
  const headers: string[] = []
  for (const [name, value] of event.headers) headers.push(name, value)
  headers.push('webhook-id', event.id, 'webhook-timestamp', String(nowS), 'webhook-signature', signatureHeader(target.keys, event.id, nowS, event.body))
  if (event.conflictWith !== null) headers.push('webhook-conflict', event.conflictWith)
  const timeout = AbortSignal.timeout(target.timeoutMs)
  try {
    const answer = await target.dispatcher.request({
      origin: target.url.origin,
      path: `${target.url.pathname}${target.url.search}`,
      method: 'POST',
      headers,
      body: event.body,
      signal: AbortSignal.any([signal, timeout]),
    })
    await answer.body.dump({ limit: 64 * 1024 })
    const retryAfter = answer.headers['retry-after']
    return { kind: 'status', status: answer.statusCode, retryAfter: Array.isArray(retryAfter) ? retryAfter[0] : retryAfter }
  } catch (err) {
    if (timeout.aborted) return { kind: 'error', reason: 'timeout' }
    return { kind: 'error', reason: (err as { code?: string }).code ?? (err as Error).name }
  }
}
