/**
 * Image build step: dist/cli.js and everything it imports as one ES module (esbuild), with its
 * source map, into dist-bundle/. A start then reads and compiles one file instead of resolving and
 * reading some 700 modules, which took two fifths off the start (docs/performance-startup.md), and
 * the runtime image needs no node_modules.
 *
 * `require` is defined for the CommonJS dependencies esbuild wraps (fastify, pino, ioredis, …), which
 * call it for Node's built-in modules only; everything else is inside the bundle.
 */
import { readFileSync } from 'node:fs'
import { build } from 'esbuild'

const result = await build({
  entryPoints: ['dist/cli.js'],
  outfile: 'dist-bundle/cli.mjs',
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  sourcemap: true,
  legalComments: 'linked',
  // V8 keeps a module's source text for as long as the module lives, as one-byte characters only
  // when every character is ASCII: a single '§' or '’' in a comment made it hold all 4 MB as two-byte
  // text. Whitespace and comments go, non-ASCII in strings is escaped, names stay (stack traces keep
  // them; the source map gives files and lines). Idle RSS 91-93 -> 80 MiB (docs/performance-startup.md).
  charset: 'ascii',
  minifyWhitespace: true,
  logLevel: 'warning',
  metafile: true,
  banner: { js: "import { createRequire as __createRequire } from 'node:module'; const require = __createRequire(import.meta.url);" },
})
const inputs = Object.keys(result.metafile.inputs)
const demo = inputs.filter((path) => path.includes('fake-provider') || path.endsWith('demo.js'))
if (demo.length > 0) throw new Error(`the bundle would carry the demo: ${demo.join(', ')}`)
const nonAscii = readFileSync('dist-bundle/cli.mjs').findIndex((byte) => byte > 0x7f)
if (nonAscii !== -1) throw new Error(`dist-bundle/cli.mjs has a non-ASCII byte at ${nonAscii}: V8 would hold its whole source as two-byte text`)
process.stdout.write(`dist-bundle/cli.mjs: ${inputs.length} modules\n`)
