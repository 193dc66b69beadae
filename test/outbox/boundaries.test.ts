/**
 * The outbox is a room of its own (STYLE "Payments, MCP and the console"): the durable, signed,
 * scheduled delivery of events to a URL, used by the inbox (webhooks/) and by notifications
 * (approvals/, payments/). It imports only what everything shares (the storage room's Redis
 * connection too), never a feature that uses it nor the proxy's plugins; only those features import it.
 */
import t from 'tap'
import { readdirSync, readFileSync } from 'node:fs'
import { join, relative } from 'node:path'
import { fileURLToPath } from 'node:url'

const SRC = fileURLToPath(new URL('../../src/', import.meta.url))
const files = (dir: string): string[] => readdirSync(dir, { withFileTypes: true }).flatMap((e) => e.isDirectory() ? files(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : [])
const importsOf = (file: string): string[] => [...readFileSync(file, 'utf8').matchAll(/(?:from|import)\s*\(?\s*'(\.[^']+)'/g)].map((m) => relative(SRC, join(file, '..', m[1] as string)))
const SHARED = ['config/schema.js', 'errors.js', 'clock.js', 'loops', 'sqlite', 'sealing', 'storage']
const USERS = ['webhooks', 'approvals', 'payments']

t.test('outbox/ imports only shared modules: no feature that uses it, no proxy plugin', async (t) => {
  const outbox = files(join(SRC, 'outbox'))
  t.ok(outbox.length > 10, `${outbox.length} modules`)
  for (const file of outbox) {
    for (const path of importsOf(file).filter((p) => !p.startsWith('outbox/'))) {
      t.ok(SHARED.some((s) => path === s || path.startsWith(`${s}/`)), `${relative(SRC, file)} -> ${path} is shared`)
    }
  }
})

t.test('only the features that deliver through it import outbox/', async (t) => {
  for (const file of files(SRC).filter((f) => !relative(SRC, f).startsWith('outbox/'))) {
    const into = importsOf(file).filter((p) => p.startsWith('outbox/'))
    if (into.length > 0) t.ok(USERS.some((u) => relative(SRC, file).startsWith(`${u}/`)), `${relative(SRC, file)} -> ${into.join(', ')}`)
  }
})
