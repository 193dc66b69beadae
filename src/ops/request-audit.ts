/**
 * One access log line and one upstream timing per forwarded request, after the answer is out
 * (SPEC §7 audit: every line names the caller). Every answer is counted once in requests_total,
 * the proxy's own refusals and 5xx included (a request refused before it was forwarded has no
 * access line: its refusal has its own). The proxy's own endpoints are not counted. The path is
 * the upstream path without its query string, which may carry references or personal data.
 */
import fp from 'fastify-plugin'
import type { FastifyInstance, FastifyRequest } from 'fastify'
import type { Logger } from 'pino'
import { callerIdOf } from '../callers/caller.js'
import { accessLineWriter, type AccessLine, type ViaFields } from './access-line.js'
import type { ProxyMetrics } from './metrics.js'
import type { ProxyActivity } from './proxy-activity.js'

export interface RequestAuditOptions {
  metrics: ProxyMetrics
  /**
   * SPEC §13: `via` and `tool` of a request a tool call made (null for the listener's requests); absent with MCP off.
   */
  via?: ((request: FastifyRequest) => ViaFields | null | undefined) | undefined
  /** Told of every forwarded request (the inbox's pacing, proxy-activity.ts); absent with the inbox off. */
  activity?: Pick<ProxyActivity, 'forwarded'> | undefined
}

export const requestAudit = fp(async function requestAudit (app: FastifyInstance, options: RequestAuditOptions) {
  const { metrics, via, activity } = options
  // One child for every access line, without redaction or the secret scrub (logger.ts): the line's
  // fields are ours and hold no secret (the path has no query string), and the two cost about 7 %
  // of a small request's CPU (docs/performance.md, issue 46).
  const accessLog = app.log.child({}, { redact: [], formatters: { log: (fields: object) => fields } })
  const writeAccessLine = accessLineWriter(accessLog as Logger)
  app.addHook('onResponse', (request, reply, done) => {
    done()
    const code = reply.getHeader('x-proxy-error')
    const route = request.target?.route
    // Not a proxy route and not refused by the proxy: /healthz, /readyz, /metrics.
    if (route === undefined && code === undefined) return
    metrics.requestAnswered(route?.environment ?? '', route?.interface ?? '', reply.statusCode, callerIdOf(request), typeof code === 'string' ? code : '')
    const ctx = request.proxy
    if (ctx === null) return
    activity?.forwarded()
    metrics.upstreamCompleted(ctx.route.environment ?? '', ctx.route.interface, (performance.now() - ctx.startedMs) / 1000)
    const line: AccessLine = {
      reqId: request.id,
      environment: ctx.route.environment,
      interface: ctx.route.interface,
      method: request.method,
      path: ctx.upstreamPath,
      status: reply.statusCode,
      retried: ctx.attempt > 0,
      durationMs: Math.round(reply.elapsedTime * 100) / 100,
      caller: callerIdOf(request),
    }
    const toolCall = via?.(request) ?? null
    if (toolCall !== null) {
      line.via = toolCall.via
      line.tool = toolCall.tool
      if (toolCall.auth !== undefined) {
        line.auth = toolCall.auth
        line.clientId = toolCall.clientId ?? null
      }
    }
    writeAccessLine(line)
  })
}, { name: 'request-audit' })
