/**
 * Summarises a V8 .cpuprofile (node --cpu-prof): self time per function, self time per package
 * (node_modules/<name>, node: internals, our dist/ files, V8 pseudo-nodes such as the garbage
 * collector), and inclusive time per function (a recursive function counted once per stack). Frames
 * in the bundle (dist-bundle/*.mjs) are named by their source through the bundle's source maps.
 *
 *   node bench/cpuprofile-summary.mjs FILE.cpuprofile [--top N] [--json]
 */
import { existsSync, readFileSync } from 'node:fs'
import { SourceMap } from 'node:module'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'

/** Each frame in a bundled file that has a source map gets the file and line it came from. */
function mapToSources (profile) {
  const maps = new Map()
  const mapFor = (url) => {
    if (!maps.has(url)) {
      const file = `${fileURLToPath(url)}.map`
      maps.set(url, existsSync(file) ? new SourceMap(JSON.parse(readFileSync(file, 'utf8'))) : null)
    }
    return maps.get(url)
  }
  for (const node of profile.nodes) {
    const frame = node.callFrame
    if (!frame.url.startsWith('file:') || !frame.url.endsWith('.mjs')) continue
    const entry = mapFor(frame.url)?.findEntry(frame.lineNumber, frame.columnNumber)
    if (entry?.originalSource === undefined) continue
    node.callFrame = { ...frame, url: new URL(entry.originalSource, frame.url).href, lineNumber: entry.originalLine }
  }
}

export function summariseProfile (profile, top = 30) {
  mapToSources(profile)
  const byId = new Map(profile.nodes.map((n) => [n.id, n]))
  const selfUs = new Map()
  for (let i = 0; i < profile.samples.length; i++) {
    const id = profile.samples[i]
    selfUs.set(id, (selfUs.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0))
  }
  const totalUs = [...selfUs.values()].reduce((a, b) => a + b, 0)
  const idleUs = [...byId.values()].filter((n) => n.callFrame.functionName === '(idle)').reduce((a, n) => a + (selfUs.get(n.id) ?? 0), 0)
  const busyUs = totalUs - idleUs

  const fnSelf = new Map()
  const pkgSelf = new Map()
  for (const [id, us] of selfUs) {
    const node = byId.get(id)
    if (node.callFrame.functionName === '(idle)') continue
    const key = functionKey(node.callFrame)
    fnSelf.set(key, (fnSelf.get(key) ?? 0) + us)
    const pkg = packageOf(node.callFrame)
    pkgSelf.set(pkg, (pkgSelf.get(pkg) ?? 0) + us)
  }

  // Inclusive time: walk the tree, adding each node's subtree time to every distinct function on its stack.
  const fnTotal = new Map()
  const subtree = new Map()
  const subtreeUs = (node) => {
    if (subtree.has(node.id)) return subtree.get(node.id)
    let us = selfUs.get(node.id) ?? 0
    for (const child of node.children ?? []) us += subtreeUs(byId.get(child))
    subtree.set(node.id, us)
    return us
  }
  const root = profile.nodes[0]
  const stack = [[root, new Set()]]
  while (stack.length > 0) {
    const [node, above] = stack.pop()
    const key = functionKey(node.callFrame)
    const seen = new Set(above)
    if (!above.has(key)) { fnTotal.set(key, (fnTotal.get(key) ?? 0) + subtreeUs(node)); seen.add(key) }
    for (const child of node.children ?? []) stack.push([byId.get(child), seen])
  }

  const pct = (us) => Math.round((1000 * us) / busyUs) / 10
  const rank = (map) => [...map].sort((a, b) => b[1] - a[1]).slice(0, top).map(([name, us]) => ({ name, ms: Math.round(us / 1000), pct: pct(us) }))
  return {
    durationMs: Math.round((profile.endTime - profile.startTime) / 1000),
    busyMs: Math.round(busyUs / 1000),
    idleMs: Math.round(idleUs / 1000),
    selfByFunction: rank(fnSelf),
    selfByPackage: rank(pkgSelf),
    inclusiveByFunction: rank(new Map([...fnTotal].filter(([k]) => !k.startsWith('(root)')))),
  }
}

function functionKey ({ functionName, url, lineNumber }) {
  const name = functionName || '(anonymous)'
  if (url === '') return name
  return `${name} ${shortUrl(url)}:${lineNumber + 1}`
}

function shortUrl (url) {
  const nm = url.lastIndexOf('node_modules/')
  if (nm !== -1) return url.slice(nm + 'node_modules/'.length)
  const ours = Math.max(url.indexOf('/dist/'), url.indexOf('/src/'))
  if (ours !== -1) return url.slice(ours + 1)
  return url.replace(/^file:\/\/.*\/bench\//, 'bench/')
}

function packageOf ({ functionName, url }) {
  if (url === '') return functionName.startsWith('(') ? functionName : '(native)'
  if (url.startsWith('node:')) return `node:${url.slice(5).split('/')[0] === 'internal' ? 'internal/' + url.slice(5).split('/')[1] : url.slice(5)}`
  const nm = url.lastIndexOf('node_modules/')
  if (nm !== -1) {
    const parts = url.slice(nm + 'node_modules/'.length).split('/')
    return parts[0].startsWith('@') ? `${parts[0]}/${parts[1]}` : parts[0]
  }
  const ours = Math.max(url.indexOf('/dist/'), url.indexOf('/src/'))
  if (ours !== -1) return `ours: ${url.slice(ours + 1).split('/').slice(0, -1).join('/')}`
  return url
}

export function formatSummary (s) {
  const table = (title, rows) => [
    `### ${title}`, '', '| % of busy | ms | function |', '|---:|---:|---|',
    ...rows.map((r) => `| ${r.pct.toFixed(1)} | ${r.ms} | \`${r.name}\` |`), '',
  ].join('\n')
  return [
    `Profile: ${s.durationMs} ms, busy ${s.busyMs} ms, idle ${s.idleMs} ms.`, '',
    table('Self time by package', s.selfByPackage),
    table('Self time by function', s.selfByFunction),
    table('Inclusive time by function', s.inclusiveByFunction),
  ].join('\n')
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const { values, positionals } = parseArgs({ allowPositionals: true, options: { top: { type: 'string', default: '30' }, json: { type: 'boolean', default: false } } })
  if (positionals.length !== 1) {
    process.stderr.write('usage: node bench/cpuprofile-summary.mjs FILE.cpuprofile [--top N] [--json]\n')
    process.exit(2)
  }
  const summary = summariseProfile(JSON.parse(readFileSync(positionals[0], 'utf8')), Number(values.top))
  process.stdout.write(values.json ? `${JSON.stringify(summary, null, 2)}\n` : `${formatSummary(summary)}\n`)
}
