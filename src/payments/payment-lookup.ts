/**
 * One look-up of a payment (SPEC §12): `GET {base of its environment and interface}{look-up path}`,
 * sent like a proxied request of that environment: its token from the environment's TokenSource,
 * SPEC §5's 401 handling (the rejected token replaced once, single-flight, and the GET retried once
 * with the new one), the shared upstream dispatcher (src/outbound/: its pools, timeouts, IP family,
 * and so the egress IP the provider allowlists). The whole look-up, answer and body, must fit in
 * PROXY_UPSTREAM_TIMEOUT_SECONDS. Anything but a readable answer about this payment is a failed
 * look-up, never an error: the schedule goes on.
 *
 * Each GET is admitted by the rate bound (PROXY_PAYMENTS_LOOKUPS_PER_SECOND) just before it is
 * sent, once the token is in hand, the 401 retry too: what the provider sees never passes the rate,
 * even when look-ups waited for a token. Without a token, or without the rate's store, nothing is
 * sent: the look-up is deferred, not failed.
 */
import { setTimeout as sleep } from 'node:timers/promises'
import type { Dispatcher } from 'undici'
import type { Config, EnvironmentName } from '../config/config.js'
import type { PaymentsConfig } from '../config/payment-config.js'
import type { TokenSource } from '../tokens/token-source.js'
import { lookupPathOf } from './lookup-path.js'
import type { LookupResult } from './payment-machine.js'
import type { PaymentRecord } from './payment-record.js'
import { MAX_PROVIDER_BODY_BYTES, readLookup } from './provider-reading.js'

/** A look-up made, or one that sent nothing (no token, the rate's store down): the payment is looked up later. */
export type LookupAttempt = LookupResult | { kind: 'deferred', reason: string }

/** Who wants the look-up: the schedule (a step, a recheck, an unverified record) or an event to confirm. */
export type LookupAsker = 'schedule' | 'event'

export type LookUp = (record: PaymentRecord, signal: AbortSignal, asker: LookupAsker) => Promise<LookupAttempt>

export interface Admission { admitted: boolean, retryAfterMs: number }

export interface LookupDeps {
  config: PaymentsConfig
  environments: Config['environments']
  sources: ReadonlyMap<EnvironmentName, TokenSource>
  dispatcher: Dispatcher
  timeoutMs: number
  /**
   * One GET may go now, or how long until one may (§9's sliding window). A look-up an event asked
   * for is admitted from at most half the rate (SPEC §12), so a flood of events never starves the
   * schedule.
   */
  admit: (asker: LookupAsker) => Promise<Admission>
}

interface Answer { status: number, body: Buffer | null, encoding: string | string[] | undefined }

export function createLookup (deps: LookupDeps): LookUp {
  const { config, environments, sources, dispatcher } = deps

  async function get (target: { origin: string, path: string }, token: string, signal: AbortSignal): Promise<Answer> {
    const answer = await dispatcher.request({
      origin: target.origin,
      path: target.path,
      method: 'GET',
      headers: { authorization: `Bearer ${token}`, accept: 'application/json', 'content-type': 'application/json' },
      signal,
    })
    return { status: answer.statusCode, body: await bounded(answer.body), encoding: answer.headers['content-encoding'] }
  }

  /** Resolves once a GET is admitted; rejects when the rate's store cannot answer or `signal` aborts. */
  async function admitted (signal: AbortSignal, asker: LookupAsker): Promise<void> {
    for (;;) {
      const admission = await deps.admit(asker)
      if (admission.admitted) return
      await sleep(admission.retryAfterMs, undefined, { signal })
    }
  }

  return async function lookUp (record, signal, asker) {
    const environment = environments[record.environment as EnvironmentName]
    const base = environment?.baseUrls[record.interface as 'fiat' | 'crypto']
    const source = sources.get(record.environment as EnvironmentName)
    const path = lookupPathOf(config.lookupPaths, record)
    if (base === undefined || source === undefined || path === null) return { kind: 'failed', reason: 'no look-up path for this environment and interface' }
    // Joined as text: a URL parser would resolve dot segments, and the path must go as it is.
    const baseUrl = new URL(base)
    const target = { origin: baseUrl.origin, path: `${baseUrl.pathname}${path}` }
    let token: string
    try {
      token = source.current() ?? await source.get()
      await admitted(signal, asker)
    } catch (err) {
      return { kind: 'deferred', reason: (err as { code?: unknown }).code === 'TOKEN_UNAVAILABLE' ? 'no token' : 'not admitted' }
    }
    const timeout = AbortSignal.timeout(deps.timeoutMs)
    const both = AbortSignal.any([signal, timeout])
    try {
      let answer = await get(target, token, both)
      if (answer.status === 401 && await source.replaceRejected(token)) {
        const replacement = source.peek()
        if (replacement !== null) {
          token = replacement
          await admitted(both, asker)
          answer = await get(target, token, both)
          if (answer.status !== 401) source.retrySucceeded(token)
        }
      }
      return readLookup(answer.status, answer.body, answer.encoding, record, config)
    } catch (err) {
      if (timeout.aborted) return { kind: 'failed', reason: 'timeout (PROXY_UPSTREAM_TIMEOUT_SECONDS)' }
      const code = (err as { code?: unknown }).code
      return { kind: 'failed', reason: typeof code === 'string' ? code : (err as Error).name }
    }
  }
}

/** The body up to the bound; null past it (the rest is not read). */
async function bounded (body: Dispatcher.ResponseData['body']): Promise<Buffer | null> {
  const chunks: Buffer[] = []
  let size = 0
  for await (const chunk of body) {
    size += (chunk as Buffer).length
    if (size > MAX_PROVIDER_BODY_BYTES) {
      body.destroy()
      return null
    }
    chunks.push(chunk as Buffer)
  }
  return Buffer.concat(chunks, size)
}
