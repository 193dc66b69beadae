/** `GET /metrics` in the Prometheus text format. */
import type { FastifyInstance } from 'fastify'
import type { Registry } from 'prom-client'

export async function metricsRoute (app: FastifyInstance, options: { registry: Registry }): Promise<void> {
  app.get('/metrics', async (_request, reply) => {
    reply.header('content-type', options.registry.contentType)
    return options.registry.metrics()
  })
}
