/**
 * Image build step: imports every module under the given dist directory (except the entry points,
 * cli.js and demo.js at any depth, which would start serving), so that Node's compile cache (NODE_COMPILE_CACHE, Node 22.1+) holds
 * V8's code for them and for every dependency they import. A start then reads compiled code
 * instead of compiling it. Importing is enough: the modules only define things until called.
 */
import { readdirSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { pathToFileURL } from 'node:url'

const ENTRY_POINTS = new Set(['cli.js', 'demo.js'])
const root = resolve(process.argv[2] ?? 'dist')
const entries = readdirSync(root, { recursive: true, withFileTypes: true })
  .filter((e) => e.isFile() && e.name.endsWith('.js') && !ENTRY_POINTS.has(e.name))
  .map((e) => join(e.parentPath, e.name))
  .sort()
for (const file of entries) await import(pathToFileURL(file).href)
process.stdout.write(`compile cache warmed with ${entries.length} modules of ${root}\n`)
