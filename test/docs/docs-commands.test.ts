/**
 * Issue 35 item 10: the commands the docs give are run. Every shell block preceded by
 * `<!-- docs-check: run -->` in README.md or docs/ (its subfolders too) is run by bash (errexit, pipefail) from a
 * directory holding this build's dist/ and dist-bundle/ (and no .env), with `payments-auth-proxy`
 * on PATH. The well-known ports (the fake provider's 4010/4020/4030, the proxy's 8080) are replaced
 * by free ones, in the text and in the fake provider's defaults, so the suite can run beside anything.
 * Blocks that need Docker are not marked: scripts/test-container.sh runs those (docs/deploy.md).
 */
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { chmodSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import t from 'tap'
import { freePorts } from '../helpers/ports.js'

const ROOT = fileURLToPath(new URL('../../', import.meta.url))
const MARK = '<!-- docs-check: run -->'
const BLOCK_TIMEOUT_MS = 30_000

interface Block { where: string, text: string }

function markedBlocks (file: string, markdown: string): Block[] {
  const lines = markdown.split('\n')
  const blocks: Block[] = []
  lines.forEach((line, i) => {
    if (line.trim() !== MARK) return
    const open = /^(\s*)```(sh|bash|console)?\s*$/.exec(lines[i + 1] ?? '')
    if (open === null) throw new Error(`${file}:${i + 1}: ${MARK} is not followed by a shell block`)
    const indent = open[1] ?? ''
    const body: string[] = []
    for (let j = i + 2; j < lines.length && lines[j]?.trim() !== '```'; j++) body.push((lines[j] ?? '').slice(indent.length))
    blocks.push({ where: `${file}:${i + 2}`, text: body.join('\n') })
  })
  return blocks
}

function allBlocks (): Block[] {
  const files = ['README.md', ...readdirSync(join(ROOT, 'docs'), { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`)]
  return files.flatMap((file) => markedBlocks(file, readFileSync(join(ROOT, file), 'utf8')))
}

const blocks = allBlocks()

t.test('the docs mark the blocks they want run', async (t) => {
  t.ok(blocks.length >= 2, `${blocks.length} blocks: ${blocks.map((b) => b.where).join(', ')}`)
})

for (const block of blocks) {
  t.test(`${block.where} runs as written`, async (t) => {
    const dir = mkdtempSync(join(tmpdir(), 'pap-docs-'))
    t.teardown(() => { rmSync(dir, { recursive: true, force: true }) })
    for (const built of ['dist', 'dist-bundle']) symlinkSync(join(ROOT, built), join(dir, built))
    writeFileSync(join(dir, 'payments-auth-proxy'), `#!/bin/sh\nexec "${process.execPath}" "${join(ROOT, 'dist-bundle', 'cli.mjs')}" "$@"\n`)
    chmodSync(join(dir, 'payments-auth-proxy'), 0o755)
    const [fiat, crypto, ip, proxy] = await freePorts(4) as [number, number, number, number]
    const ports = { fiat, crypto, ip, proxy }
    const text = block.text
      .replace(/\b4010\b/g, String(ports.fiat)).replace(/\b4020\b/g, String(ports.crypto))
      .replace(/\b4030\b/g, String(ports.ip)).replace(/\b8080\b/g, String(ports.proxy))
    const child = spawn('bash', ['-euo', 'pipefail', '-c', text], {
      cwd: dir,
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: {
        PATH: `${dir}:${process.env['PATH'] ?? ''}`,
        HOME: process.env['HOME'],
        FAKE_PROVIDER_FIAT_PORT: String(ports.fiat),
        FAKE_PROVIDER_CRYPTO_PORT: String(ports.crypto),
        FAKE_PROVIDER_IP_PORT: String(ports.ip),
      },
    })
    let output = ''
    child.stdout.on('data', (c: Buffer) => { output += c.toString('utf8') })
    child.stderr.on('data', (c: Buffer) => { output += c.toString('utf8') })
    const timer = setTimeout(() => { process.kill(-(child.pid ?? 0), 'SIGKILL') }, BLOCK_TIMEOUT_MS)
    const [code] = await once(child, 'exit') as [number | null]
    clearTimeout(timer)
    // Whatever the block left running in the background (after a failure, its `kill` never ran).
    try { process.kill(-(child.pid ?? 0), 'SIGKILL') } catch { /* the group has already exited */ }
    t.equal(code, 0, `${block.where} exits 0${code === 0 ? '' : `; output:\n${output}`}`)
  })
}

t.test('docs start the fake provider from the demo image only: the production image has none', async (t) => {
  for (const file of ['README.md', 'docs/deploy.md', 'deploy/kubernetes/README.md']) {
    const text = readFileSync(join(ROOT, file), 'utf8')
    for (const line of text.split('\n').filter((l) => l.includes('dist/fake-provider/cli.js') && /payments-auth-proxy(:|\s)/.test(l))) {
      t.match(line, /payments-auth-proxy-demo:|demo image|`demo` target|--target demo/, `${file}: ${line.trim()}`)
    }
  }
})
