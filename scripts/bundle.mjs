/**
 * Image build step: dist/cli.js and everything it imports as one ES module (esbuild), with its
 * source map, into dist-bundle/. A start then reads and compiles one file instead of resolving and
 * reading some 700 modules: spawn -> first /healthz 200 went from 930 ms to 540 ms on Node 20 here
 * (docs/performance-startup.md). The runtime image needs no node_modules then.
 *
 * `require` is defined for the CommonJS dependencies esbuild wraps (fastify, pino, ioredis, …), which
 * call it for Node's built-in modules only; everything else is inside the bundle.
 */
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
  logLevel: 'warning',
  metafile: true,
  banner: { js: "import { createRequire as __createRequire } from 'node:module'; const require = __createRequire(import.meta.url);" },
})
const inputs = Object.keys(result.metafile.inputs)
const demo = inputs.filter((path) => path.includes('fake-provider') || path.endsWith('demo.js'))
if (demo.length > 0) throw new Error(`the bundle would carry the demo: ${demo.join(', ')}`)
process.stdout.write(`dist-bundle/cli.mjs: ${inputs.length} modules\n`)
