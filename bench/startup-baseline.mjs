/**
 * The startup reference of issue 27: a one-route Fastify server (GET /healthz), logger off. Our
 * proxy's start time and idle memory are quoted as ratios against it, measured in the same run.
 * Env: PORT, HOST (127.0.0.1).
 */
import Fastify from 'fastify'

const app = Fastify({ logger: false })
app.get('/healthz', async () => ({ status: 'ok' }))
await app.listen({ host: process.env.HOST ?? '127.0.0.1', port: Number(process.env.PORT) })
const close = () => { app.close().catch(() => process.exit(1)) }
process.once('SIGTERM', close)
process.once('SIGINT', close)
