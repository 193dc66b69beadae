/**
 * One Redis connection set per process (storage/redis-connection.ts): the built sidecar with every
 * feature on (callers with approveAbove and approval notifications, the inbox, payments and their
 * notifications, MCP, the console) opens one connection per isolate, named with CLIENT SETNAME:
 * `pap:sidecar` for the main thread, `pap:inbox` for the inbox's thread (a V8 isolate of its own,
 * which cannot share the main thread's socket). Redis's own count of accepted connections shows
 * that none was opened and closed on the way. The operator commands open their stores the same
 * way: one connection each, named after the command.
 */
import t from 'tap'
import { Redis } from 'ioredis'
import { runCli } from '../helpers/child-proxy.js'
import { freePort } from '../helpers/ports.js'
import { startRedis } from '../helpers/redis-server.js'
import { approvalsCallersFile, pay, SIGNING_SECRET as APPROVAL_SIGNING_SECRET } from '../approvals/approvals-harness.js'
import { setting, startSidecar } from '../payments/payments-harness.js'

/** The clients Redis sees, by name, the asking one left out. */
async function namedClients (admin: Redis): Promise<Record<string, number>> {
  const list = String(await admin.client('LIST'))
  const counts: Record<string, number> = {}
  for (const line of list.split('\n')) {
    if (line.trim() === '' || / name=test:admin( |$)/.test(line)) continue
    const name = / name=([^ ]*)/.exec(line)?.[1] ?? ''
    counts[name] = (counts[name] ?? 0) + 1
  }
  return counts
}

async function accepted (admin: Redis): Promise<number> {
  return Number(/total_connections_received:(\d+)/.exec(await admin.info('stats'))?.[1])
}

t.test('every feature on: one Redis connection per isolate, and one for each operator command', async (t) => {
  const redis = await startRedis(t)
  const admin = new Redis(redis.url, { connectionName: 'test:admin', lazyConnect: true })
  t.teardown(() => admin.disconnect())
  await admin.connect()
  const { app, dir, env: base } = await setting(t)
  const consolePort = await freePort()
  const env = {
    ...base,
    PROXY_REDIS_URL: redis.url,
    PROXY_CALLERS_FILE: approvalsCallersFile(dir),
    PROXY_APPROVAL_SIGNING_SECRET: APPROVAL_SIGNING_SECRET,
    PROXY_APPROVAL_NOTIFY_URL: `${app.url}/approvals`,
    PROXY_MCP: 'on',
    PROXY_CONSOLE_LISTEN: `127.0.0.1:${consolePort}`,
    PROXY_CONSOLE_APPROVERS: 'ann@example.com',
  }
  const before = await accepted(admin)
  const sidecar = await startSidecar(t, env)
  await sidecar.child.waitFor(/console ready/)
  // startSidecar waited for /readyz with payments ready.
  const log = sidecar.child.stdout()
  for (const started of ['approvals (Redis)', 'webhook inbox ready to accept events', 'console ready']) t.match(log, started, `${started}: on`)
  t.not((await fetch(`${sidecar.url}/mcp`, { method: 'POST' })).status, 404, 'MCP: on')

  t.same(await namedClients(admin), { 'pap:sidecar': 1, 'pap:inbox': 1 }, 'one connection for the main thread, one for the inbox\'s thread')
  t.equal(await accepted(admin) - before, 2, 'and no other was opened on the way')

  // A rejection opens the approvals' store and the state store (the amount is given back to the day's total).
  const held = await pay({ url: sidecar.url } as Parameters<typeof pay>[0], { amount: 250, currency: 'KES', externalReference: 'ref-connections' })
  t.equal(held.status, 202, 'a payout above approveAbove is held')
  const { approval } = await held.json() as { approval: { id: string } }
  const commands = [['approvals', 'list'], ['approvals', 'reject', approval.id, '--by', 'Ann'], ['payments', 'list'], ['webhooks', 'list'], ['console-link', '--as', 'ann@example.com']]
  for (const args of commands) {
    const opened = await accepted(admin)
    const command = runCli(t, args, env)
    const { code } = await command.exited
    t.equal(code, 0, `${args.join(' ')} ran\n${command.stderr()}`)
    t.equal(await accepted(admin) - opened, 1, `${args.slice(0, 2).join(' ')}: one connection for every store it opens`)
  }
  t.same(await namedClients(admin), { 'pap:sidecar': 1, 'pap:inbox': 1 }, 'the commands\' connections are closed; the sidecar\'s are the same two')
  sidecar.child.process.kill('SIGTERM')
  await sidecar.child.exited
})
