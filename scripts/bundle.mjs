/**
 * `npm run build`'s second step, after tsc: dist/cli.js and everything it imports bundled by esbuild,
 * with source maps, into dist-bundle/: cli.mjs, and chunks/ for what is loaded with import() only
 * when it is needed. `npm start` and the image run it.
 * A start then reads and compiles a few files instead of resolving and reading some 700 modules
 * (docs/performance.md, Start and idle memory), and the image needs no node_modules.
 *
 * `require` is defined for the CommonJS dependencies esbuild wraps (fastify, pino, ioredis, …), which
 * call it for Node's built-in modules only; everything else is inside the bundle.
 */
import { cpSync, readFileSync, rmSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { build } from 'esbuild'

const OUT_DIR = 'dist-bundle'
const UNDICI_ENTRY = fileURLToPath(new URL('undici-dispatchers.cjs', import.meta.url))
const PROM_CLIENT_ENTRY = fileURLToPath(new URL('prom-client-metrics.cjs', import.meta.url))
// The only modules that import undici, and what they take from it is what undici-dispatchers.cjs
// exports. Another importer fails the build until that file is checked against what it uses.
const UNDICI_IMPORTERS = ['dist/outbound/outbound-agents.js', 'dist/outbox/delivery-agent.js', 'node_modules/@fastify/reply-from/lib/request.js']
const importers = { undici: new Set(), 'prom-client': new Set() }

/**
 * Bare `undici` resolves to its dispatchers alone (scripts/undici-dispatchers.cjs), bare
 * `prom-client` to its metrics and registry alone (scripts/prom-client-metrics.cjs).
 */
const slimEntries = {
  name: 'slim-entries',
  setup (build) {
    build.onResolve({ filter: /^(undici|prom-client)$/ }, ({ path, importer }) => {
      importers[path].add(importer)
      return { path: path === 'undici' ? UNDICI_ENTRY : PROM_CLIENT_ENTRY }
    })
  },
}

/**
 * Our ESM `import … from 'node:http'` becomes a `require('node:http')`. Node 24 builds an ES module
 * of a built-in by reading every one of its exports, and node:http's `WebSocket` export loads Node's
 * own copy of undici when read: a large module, compiled and held for nothing. The CommonJS
 * dependencies already reach node:http through `require`, which reads nothing it is not asked for.
 */
const builtinsByRequire = {
  name: 'builtins-by-require',
  setup (build) {
    build.onResolve({ filter: /^node:https?$/ }, ({ path, kind }) => kind === 'import-statement' ? { path, namespace: 'builtin-by-require' } : undefined)
    build.onLoad({ filter: /.*/, namespace: 'builtin-by-require' }, ({ path }) => ({ contents: `module.exports = require(${JSON.stringify(path)})`, loader: 'js' }))
  },
}

// tsc neither checks nor copies the precompiled settings validator (scripts/generate-settings-validator.mts).
cpSync('src/config/settings-validator.generated.js', 'dist/config/settings-validator.generated.js')
rmSync(OUT_DIR, { recursive: true, force: true })
const result = await build({
  entryPoints: ['dist/cli.js'],
  outdir: OUT_DIR,
  outExtension: { '.js': '.mjs' },
  // What is imported with import() (each command's code, Redis, the callers file's reader) goes in
  // chunks of its own: a start reads and compiles only what it loads.
  splitting: true,
  chunkNames: 'chunks/[name]-[hash]',
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node22',
  sourcemap: true,
  legalComments: 'linked',
  // V8 keeps a module's source text for as long as the module lives, as one-byte characters only
  // when every character is ASCII: a single non-ASCII character in a comment made it hold the whole
  // bundle as two-byte text. Whitespace and comments go, non-ASCII in strings is escaped, names stay
  // (stack traces keep them; the source map gives files and lines). docs/performance.md, Start and idle memory.
  charset: 'ascii',
  minifyWhitespace: true,
  logLevel: 'warning',
  metafile: true,
  plugins: [slimEntries, builtinsByRequire],
  // The native SQLite driver (src/sqlite/open-database.ts): loaded from node_modules, only when a
  // store is opened.
  external: ['better-sqlite3'],
  banner: { js: "import { createRequire as __createRequire } from 'node:module'; const require = __createRequire(import.meta.url);" },
})
const inputs = Object.keys(result.metafile.inputs)
const demo = inputs.filter((path) => path.includes('fake-provider') || path.endsWith('demo.js'))
if (demo.length > 0) throw new Error(`the bundle would carry the demo: ${demo.join(', ')}`)
const unknownImporters = [...importers.undici].filter((path) => !UNDICI_IMPORTERS.some((known) => path.endsWith(known)))
if (unknownImporters.length > 0) throw new Error(`undici is imported by ${unknownImporters.join(', ')}: check that scripts/undici-dispatchers.cjs exports what it uses, then list it in UNDICI_IMPORTERS`)
const mainInputs = Object.keys(result.metafile.outputs[`${OUT_DIR}/cli.mjs`]?.inputs ?? {})
const inboxInMain = mainInputs.filter((path) => path.includes('dist/webhooks/'))
if (inboxInMain.length > 0) throw new Error(`the main chunk carries the webhook inbox (it must be loaded only when configured): ${inboxInMain.join(', ')}`)
const consoleInMain = mainInputs.filter((path) => path.includes('dist/console/'))
if (consoleInMain.length > 0) throw new Error(`the main chunk carries the console (it must be loaded only when configured): ${consoleInMain.join(', ')}`)
// The console's templates, stylesheet and script, served as written: beside the chunk that reads
// them from its own URL (src/console/template-dir.ts), and beside dist/console/ for tsc's output.
const templateChunk = Object.entries(result.metafile.outputs).find(([, output]) => Object.keys(output.inputs).includes('dist/console/template-dir.js'))?.[0]
if (templateChunk === undefined) throw new Error('no chunk holds dist/console/template-dir.js: the console could not find its templates')
cpSync('src/console/templates', join(dirname(templateChunk), 'templates'), { recursive: true })
cpSync('src/console/templates', 'dist/console/templates', { recursive: true })
const mcpInMain = mainInputs.filter((path) => path.includes('dist/mcp/') || path.includes('node_modules/@modelcontextprotocol/'))
if (mcpInMain.length > 0) throw new Error(`the main chunk carries MCP (it must be loaded only with PROXY_MCP=on): ${mcpInMain.slice(0, 5).join(', ')}`)
const oauthInMain = mainInputs.filter((path) => (path.includes('dist/oauth/') && !path.endsWith('dist/oauth/feature.js')) || path.includes('node_modules/jose/'))
if (oauthInMain.length > 0) throw new Error(`the main chunk carries OAuth (it must be loaded only with PROXY_MCP_OAUTH_ISSUER): ${oauthInMain.slice(0, 5).join(', ')}`)
const promClientExports = new Set(Object.keys(createRequire(import.meta.url)(PROM_CLIENT_ENTRY)))
for (const importer of importers['prom-client']) {
  if (!importer.includes('/dist/')) throw new Error(`prom-client is imported by ${importer}: only our own named imports are checked against scripts/prom-client-metrics.cjs`)
  const names = [...readFileSync(importer, 'utf8').matchAll(/import\s*\{([^}]*)\}\s*from\s*'prom-client'/g)].flatMap((m) => m[1].split(',').map((name) => name.trim().split(/\s+as\s+/)[0]).filter((name) => name !== ''))
  const missing = names.filter((name) => !promClientExports.has(name))
  if (missing.length > 0) throw new Error(`${importer} imports ${missing.join(', ')} from prom-client: export it from scripts/prom-client-metrics.cjs`)
}
if (inputs.includes('node_modules/prom-client/index.js')) throw new Error("the bundle holds prom-client's whole entry (node_modules/prom-client/index.js)")
if (inputs.includes('node_modules/undici/index.js')) throw new Error("the bundle holds undici's whole entry (node_modules/undici/index.js)")
const outputs = Object.keys(result.metafile.outputs).filter((path) => path.endsWith('.mjs'))
for (const output of outputs) {
  const nonAscii = readFileSync(output).findIndex((byte) => byte > 0x7f)
  if (nonAscii !== -1) throw new Error(`${output} has a non-ASCII byte at ${nonAscii}: V8 would hold its whole source as two-byte text`)
}
process.stdout.write(`${OUT_DIR}/cli.mjs: ${inputs.length} modules in ${outputs.length} files\n`)
