/**
 * SPEC §13 as the built CLI runs it: PROXY_MCP=on without a callers file, or with an invalid tools
 * file, stops the start with a line naming the variable or the field; a running sidecar serves /mcp
 * and reloads its tools file on SIGHUP and within 2 s of a change, refusing an invalid one and keeping
 * the tools in force.
 */
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import t from 'tap'
import { listeningPort, runCli } from '../helpers/child-proxy.js'
import { eventually } from '../helpers/eventually.js'
import { providerEnv, startProvider } from '../helpers/harness.js'
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client'
import { KEYS, SEALING_SECRET, SIGNING_SECRET, TOOLS_YAML, callersYaml, tempDir } from './mcp-rig.js'

t.test('PROXY_MCP=on without PROXY_CALLERS_FILE stops the start with one line naming it', async (t) => {
  const child = runCli(t, [], providerEnv(await startProvider(t), { PROXY_MCP: 'on' }))
  t.equal((await child.exited).code, 1)
  const lines = child.stderr().split('\n').filter((l) => l.startsWith('  - '))
  t.same(lines, ['  - PROXY_MCP=on needs PROXY_CALLERS_FILE: agents over MCP are identified by their caller key (SPEC §13)'])
})

t.test('an invalid tools file stops the start naming the file and the field', async (t) => {
  const dir = tempDir(t)
  writeFileSync(join(dir, 'callers.yaml'), callersYaml())
  writeFileSync(join(dir, 'tools.yaml'), TOOLS_YAML.replace('path: /transactions/{transactionId}', 'path: /transactions/../{transactionId}'))
  const child = runCli(t, [], providerEnv(await startProvider(t), {
    PROXY_MCP: 'on', PROXY_CALLERS_FILE: join(dir, 'callers.yaml'), PROXY_MCP_TOOLS_FILE: join(dir, 'tools.yaml'), PROXY_APPROVAL_SIGNING_SECRET: SIGNING_SECRET, PROXY_APPROVAL_SEALING_SECRET: SEALING_SECRET, PROXY_WEBHOOK_STORE_PATH: join(dir, 'w.db'),
  }))
  t.equal((await child.exited).code, 1)
  t.match(child.stderr(), /invalid configuration \(nothing was started\)\n {2}- .*tools\.yaml: tools\[0\]\.path: "\.\." is not a canonical path segment/)
  const check = runCli(t, ['check'], providerEnv(await startProvider(t), {
    PROXY_MCP: 'on', PROXY_CALLERS_FILE: join(dir, 'callers.yaml'), PROXY_MCP_TOOLS_FILE: join(dir, 'tools.yaml'), PROXY_APPROVAL_SIGNING_SECRET: SIGNING_SECRET, PROXY_APPROVAL_SEALING_SECRET: SEALING_SECRET, PROXY_WEBHOOK_STORE_PATH: join(dir, 'w.db'),
  }))
  t.not((await check.exited).code, 0, 'check fails too')
  t.match(check.stdout(), /FAIL {2}MCP tools file: .*tools\.yaml: tools\[0\]\.path: "\.\." is not a canonical path segment/)
})

t.test('a running sidecar reloads its tools on SIGHUP and on a change of the file; an invalid file is refused and the tools stay', async (t) => {
  const dir = tempDir(t)
  const tools = join(dir, 'tools.yaml')
  writeFileSync(join(dir, 'callers.yaml'), callersYaml())
  writeFileSync(tools, TOOLS_YAML)
  const child = runCli(t, [], providerEnv(await startProvider(t), {
    PROXY_MCP: 'on', PROXY_CALLERS_FILE: join(dir, 'callers.yaml'), PROXY_MCP_TOOLS_FILE: tools, PROXY_APPROVAL_SIGNING_SECRET: SIGNING_SECRET, PROXY_APPROVAL_SEALING_SECRET: SEALING_SECRET, PROXY_WEBHOOK_STORE_PATH: join(dir, 'w.db'), PROXY_DEFAULT_ENVIRONMENT: 'sandbox',
  }))
  await child.waitFor(/Server listening at/)
  const port = listeningPort(child)
  const names = async (): Promise<string[]> => {
    const client = new Client({ name: 'cli-test', version: '1' }, { versionNegotiation: { mode: 'auto' } })
    await client.connect(new StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${port}/mcp`), { requestInit: { headers: { authorization: `Bearer ${KEYS.reader}` } } }))
    try {
      return (await client.listTools()).tools.map((tool) => tool.name)
    } finally {
      await client.close()
    }
  }
  t.ok((await names()).includes('get_transaction'))

  writeFileSync(tools, TOOLS_YAML.replaceAll('get_transaction', 'read_transaction'))
  child.process.kill('SIGHUP')
  await eventually(async () => (await names()).includes('read_transaction'), { what: 'the renamed tool after SIGHUP', timeoutMs: 5000 })

  // The first write was seen by the watcher too: wait for its reload to be logged, then count.
  const reloads = (): number => child.stdout().split('\n').filter((l) => l.includes('"trigger":"MCP tools file changed"') && l.includes('"msg":"MCP tools file reloaded"')).length
  await eventually(() => reloads() > 0, { what: 'the watcher\'s reload of the first change', timeoutMs: 4000 })
  const before = reloads()
  const changed = Date.now()
  writeFileSync(tools, TOOLS_YAML.replaceAll('get_transaction', 'fetch_transaction'))
  await eventually(() => reloads() > before, { what: 'the reload after a change of the file', timeoutMs: 4000, everyMs: 10 })
  const tookMs = Date.now() - changed
  t.ok(tookMs <= 2000, `reloaded ${tookMs} ms after the change (SPEC: within 2 s)`)
  t.ok((await names()).includes('fetch_transaction'), 'the renamed tool after a change of the file')

  writeFileSync(tools, 'tools:\n  - name: broken\n')
  child.process.kill('SIGHUP')
  await child.waitFor(/MCP tools file refused; the tools in force stay/)
  t.ok((await names()).includes('fetch_transaction'), 'the tools in force stay')
  t.match(child.stdout(), /"problems":\[".*tools\.yaml: tools\[0\]\.title: is required/)
})
