/**
 * `POST /webhooks/<path token>` (SPEC §10), its checks in the order the SPEC gives: path token
 * (404) -> source (403) -> method (405) before any byte of the body is read; then size (413, by the
 * body parser's limit) -> signature (401) -> store (503). Only then 200, after the synced commit.
 * Logs show `/webhooks/<redacted>`: the token is never in a log line, label or error body.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import type { IncomingMessage } from 'node:http'
import type { BlockList } from 'node:net'
import type { Clock } from '../clock.js'
import type { WebhookConfig } from '../config/webhook-config.js'
import { peerIn } from '../config/network-lists.js'
import {
  ProxyError,
  WebhookMethodNotAllowedError,
  WebhookRouteNotFoundError,
  WebhookSignatureInvalidError,
  WebhookSourceNotAllowedError,
  WebhookStoreUnavailableError,
} from '../errors.js'
import type { OutboxStore } from '../outbox/outbox-store.js'
import { eventKeys } from './event-key.js'
import type { InboxObserver, IntakeOutcomeLabel } from './inbox-metrics.js'
import type { IntakePacer } from './intake-pacing.js'
import type { PathTokenMatcher } from './path-token.js'
import { isValidSignature } from './provider-signature.js'
import { sourceAddress } from './source-address.js'
import { headersToStore } from './stored-headers.js'

export const INTAKE_PATH_PREFIX = '/webhooks/'
export const REDACTED_PATH = '/webhooks/<redacted>'

export interface IntakeRouteOptions {
  settings: WebhookConfig
  store: OutboxStore
  matchesToken: PathTokenMatcher
  trusted: BlockList
  /** null: any source. */
  allowed: BlockList | null
  observer: InboxObserver
  clock: Clock
  /** A new event is stored: the deliverer looks for it at once. */
  onStored: () => void
  /** Whether the request sent `Expect: 100-continue` and awaits its interim answer (asked once). */
  awaitsContinue: (req: IncomingMessage) => boolean
  /** How long to hold an event while the proxy is busy (intake-pacing.ts); absent: never held. */
  pacer?: IntakePacer | undefined
}

declare module 'fastify' {
  interface FastifyRequest { webhookSource: string }
}

export async function intakeRoute (app: FastifyInstance, options: IntakeRouteOptions): Promise<void> {
  const { settings, store, observer, clock } = options
  const started = new WeakMap<FastifyRequest, number>()
  app.decorateRequest('webhookSource', '')

  const refuse = (request: FastifyRequest, error: ProxyError, outcome: IntakeOutcomeLabel | null): ProxyError => {
    request.log.warn({ code: error.code, source: request.webhookSource, path: REDACTED_PATH }, 'webhook refused')
    if (outcome !== null) observer.received(outcome, elapsedS(request))
    return error
  }
  const elapsedS = (request: FastifyRequest): number =>
    (clock.monotonicMs() - (started.get(request) ?? clock.monotonicMs())) / 1000

  app.route({
    method: ['DELETE', 'GET', 'HEAD', 'PATCH', 'POST', 'PUT', 'OPTIONS'],
    url: `${INTAKE_PATH_PREFIX}:token`,
    bodyLimit: settings.bodyLimitBytes,
    // The route's own checks, before the body is read.
    onRequest: async (request) => {
      started.set(request, clock.monotonicMs())
      request.webhookSource = sourceAddress(request.raw.socket.remoteAddress ?? '', request.headers['x-forwarded-for'], options.trusted)
      // The raw segment, as sent: the decoded parameter would accept other spellings of the token.
      const raw = (request.raw.url ?? '').split('?', 1)[0] ?? ''
      if (!options.matchesToken(raw.slice(INTAKE_PATH_PREFIX.length))) throw refuse(
        request,
        new WebhookRouteNotFoundError(),
        null,
      )
      if (options.allowed !== null && !peerIn(options.allowed, request.webhookSource)) throw refuse(request, new WebhookSourceNotAllowedError(), 'not_allowed')
      if (request.method !== 'POST') throw refuse(request, new WebhookMethodNotAllowedError(), null)
      // Held before its body is read: the sender's bytes wait in the socket, not in this heap.
      const holdMs = options.pacer?.waitMs() ?? 0
      if (holdMs > 0) await new Promise<void>((resolve) => { clock.setTimeout(resolve, holdMs) })
    },
    // SPEC §5's rule: a declared length over the limit gets the 413 (the body parser's, from the
    // header) instead of 100 Continue; within it, or without a length, the sender is told to go on.
    preParsing: async (request, reply, payload) => {
      if (options.awaitsContinue(request.raw) && !(Number(request.headers['content-length']) > settings.bodyLimitBytes)) reply.raw.writeContinue()
      return payload
    },
    handler: async (request, reply) => await intake(request, reply),
  })

  async function intake (request: FastifyRequest, reply: FastifyReply): Promise<unknown> {
    const body = Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0)
    const verify = settings.verify
    if (verify !== null && !isValidSignature(verify, request.headers[verify.header], body)) {
      throw refuse(request, new WebhookSignatureInvalidError(), 'unauthorized')
    }
    const keys = eventKeys(
      body,
      settings.eventIdHeader === null ? undefined : request.headers[settings.eventIdHeader],
      settings,
    )
    let outcome
    try {
      outcome = await store.intake({
        ...keys,
        body,
        headers: headersToStore(request.raw.rawHeaders, settings.verificationHeader),
        source: request.webhookSource,
        receivedAtMs: clock.wallMs(),
      })
    } catch (err) {
      request.log.error({ err, source: request.webhookSource }, 'webhook not stored')
      throw refuse(request, err instanceof ProxyError ? err : new WebhookStoreUnavailableError('the store failed', err), 'unavailable')
    }
    const log = {
      id: outcome.id,
      key: keys.key,
      orderKey: keys.orderKey,
      source: request.webhookSource,
      bytes: body.length,
    }
    if (outcome.kind === 'duplicate') {
      request.log.info(log, 'webhook duplicate')
      observer.received('duplicate', elapsedS(request))
      return await reply.send({ received: true, id: outcome.id, duplicate: true })
    }
    if (outcome.kind === 'conflict') request.log.warn({ ...log, conflictWith: outcome.conflictWith }, 'webhook conflict: same event id, different body')
    else request.log.info(log, 'webhook stored')
    if (outcome.evicted !== undefined) {
      request.log.warn({ id: outcome.id, evicted: outcome.evicted },
        'webhook store full: delivered events removed before their retention to make room; their keys no longer catch duplicates (raise PROXY_WEBHOOK_STORE_MAX_EVENTS or _MAX_BYTES)')
      observer.evicted(outcome.evicted)
    }
    observer.received('stored', elapsedS(request))
    options.onStored()
    return await reply.send({ received: true, id: outcome.id })
  }
}
