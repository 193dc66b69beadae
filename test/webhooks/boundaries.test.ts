/**
 * The inbox is a second application beside the proxy (SPEC §10, STYLE "The inbox and approvals"):
 * the proxy's modules never import `webhooks/` (the features list names it), and `webhooks/` loads only what both share
 * (config, errors, clock, the logger, http edges, json, text, ops metrics, the proxy's activity that
 * its pacing reads, the outbox that delivers its events, threads and SQLite threads, the storage room),
 * never the proxy's plugins.
 */
import t from 'tap'
import { readdirSync, readFileSync } from 'node:fs'
import { join, relative } from 'node:path'
import { fileURLToPath } from 'node:url'

const SRC = fileURLToPath(new URL('../../src/', import.meta.url))
const files = (dir: string): string[] => readdirSync(dir, { withFileTypes: true }).flatMap((e) => e.isDirectory() ? files(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : [])
// What a module loads when it runs: `import type` is erased by the compiler and loads nothing.
const importsOf = (file: string): string[] => [...readFileSync(file, 'utf8').replace(/^import type [^;]*?from '[^']+'$/gm, '').matchAll(/(?:from|import)\s*\(?\s*'(\.[^']+)'/g)].map((m) => join(file, '..', m[1] as string))
const PROXY_PLUGINS = ['access', 'callers', 'egress', 'fake-provider', 'headers', 'idempotency', 'routing', 'state', 'tokens', 'outbound', 'server.js']
const SHARED = ['config', 'errors.js', 'operator-error.js', 'clock.js', 'logger.js', 'http', 'json', 'sqlite', 'storage', 'threads', 'text', 'outbox', 'ops/metrics.js', 'ops/health-routes.js', 'ops/proxy-activity.js', 'ops/worker-passes.js']

t.test('no proxy module imports webhooks/ (the features list names it, the demo starts it; notifications have an outbox of their own)', async (t) => {
  for (const file of files(SRC).filter((f) => !f.includes('/webhooks/') && !f.endsWith('/features/index.ts') && !f.endsWith('/demo.ts'))) {
    const bad = importsOf(file).filter((path) => relative(SRC, path).startsWith('webhooks/'))
    t.same(bad, [], relative(SRC, file))
  }
})

t.test('webhooks/ imports only shared modules, never the proxy\'s plugins', async (t) => {
  for (const file of files(join(SRC, 'webhooks'))) {
    const outside = importsOf(file).map((path) => relative(SRC, path)).filter((path) => !path.startsWith('webhooks/'))
    for (const path of outside) {
      t.notOk(PROXY_PLUGINS.some((p) => path === p || path.startsWith(`${p}/`)), `${relative(SRC, file)} -> ${path} is not a proxy plugin`)
      t.ok(SHARED.some((s) => path === s || path.startsWith(`${s}/`)), `${relative(SRC, file)} -> ${path} is shared`)
    }
  }
})
