#!/usr/bin/env node
// `npm run test:guards`: named mutations of the guards that live in plugins (fail-closed paths, day
// totals, identity), each applied in place one at a time, the test files that guard it run, and a
// failure expected. A mutation the tests do not notice "survived": the run exits 1 (issue 38).
//
//   node scripts/test-guards.mjs                 every mutation
//   node scripts/test-guards.mjs NAME [NAME...]  only these
//
// The source is restored after each mutation (finally, and on SIGINT/SIGTERM/exit); the script
// refuses to start when a file it mutates has uncommitted changes, so a restore never loses work.
import { spawnSync } from 'node:child_process'
import { readFileSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

const root = join(dirname(fileURLToPath(import.meta.url)), '..')

/** Each: the SPEC rule it breaks, exact texts in one file (each found once) and their replacements, the tests that must fail. */
const MUTATIONS = [
  {
    name: 'amount-rounds-down',
    rule: 'an amount is rounded up to 1e-8 before comparing (§7)',
    file: 'src/callers/amount-limits.ts',
    edits: [{ search: "const units = toUnits(amountRead.value, 'up')", replace: "const units = toUnits(amountRead.value, 'down')" }],
    tests: ['test/callers/amount-decision.test.ts', 'test/callers/amount-limits.test.ts'],
  },
  {
    name: 'day-total-given-back-on-5xx',
    rule: 'a day total is kept for any answer but a 4xx (§7)',
    file: 'src/callers/amount-limits-plugin.ts',
    edits: [{ search: '(status >= 400 && status < 500)', replace: '(status >= 400)' }],
    tests: ['test/callers/amount-limits.test.ts'],
  },
  {
    name: 'keyed-caller-sources-ignored',
    rule: 'a key of a caller with sources used from elsewhere is refused (§7)',
    file: 'src/callers/judge-caller.ts',
    edits: [{ search: "    if (entry.sources !== null && !peerIn(entry.sources, facts.peer)) return 'caller key used from outside its sources'\n", replace: '' }],
    tests: ['test/callers/judge-caller.test.ts', 'test/callers/callers-proxy.test.ts'],
  },
  {
    name: 'rate-limit-admits-when-store-down',
    rule: 'store down: a rate-limited request is refused with 503 (§9)',
    file: 'src/callers/callers-plugin.ts',
    edits: [{ search: 'const rate = await options.store.hit(`rate:${caller.id}`, requests, perSeconds * 1000)', replace: 'const rate = await options.store.hit(`rate:${caller.id}`, requests, perSeconds * 1000).catch(() => ({ admitted: true, retryAfterMs: 0 }))' }],
    tests: ['test/callers/store-outage.test.ts'],
  },
  {
    name: 'amount-reserve-ok-when-store-down',
    rule: 'store down: an amount-limited request is refused with 503 (§9)',
    file: 'src/callers/amount-limits-plugin.ts',
    edits: [{ search: 'ok = await store.reserve(key, r.units, r.perDay, ttlMs)', replace: 'ok = await store.reserve(key, r.units, r.perDay, ttlMs).catch(() => true)' }],
    tests: ['test/callers/store-outage.test.ts'],
  },
  {
    name: 'idempotency-forwards-when-store-down',
    rule: 'store down: an idempotency check is refused with 503, never forwarded unchecked (§9)',
    file: 'src/idempotency/idempotency-plugin.ts',
    edits: [{ search: 'done(err instanceof StateUnavailableError ? err : new StateUnavailableError())', replace: 'done()' }],
    tests: ['test/callers/store-outage.test.ts'],
  },
  {
    name: 'first-authorization-wins',
    rule: 'two Authorization headers are refused, never "the first wins" (§7)',
    file: 'src/callers/judge-caller.ts',
    edits: [{ search: "  if (facts.authorizations.length > 1) return 'more than one Authorization header'\n", replace: '' }],
    tests: ['test/callers/judge-caller.test.ts', 'test/callers/callers-proxy.test.ts'],
  },
  {
    name: 'retry-after-always-one',
    rule: 'Retry-After of a rate limit is the time until the next admission (§7)',
    file: 'src/callers/callers-plugin.ts',
    edits: [{ search: 'Math.max(1, Math.ceil(rate.retryAfterMs / 1000))', replace: '1' }],
    tests: ['test/callers/callers-proxy.test.ts'],
  },
  {
    name: 'linger-without-total-bound',
    rule: 'a lingering socket is closed at its total bound even if the client keeps sending (§5 HTTP edges)',
    file: 'src/http/lingering-close.ts',
    edits: [{ search: 'setTimeout(destroy, bounds.totalMs)', replace: 'setTimeout(destroy, bounds.totalMs * 100)' }],
    tests: ['test/security/http-edges.test.ts'],
  },
  {
    name: 'amount-step-before-idempotency',
    rule: 'a replay, 409 or 422 is answered before the amount step and costs no amount (§7)',
    file: 'src/server.ts',
    edits: [
      { search: '  if (refuse !== null) await app.register(amountLimitsPlugin, { store, clock, refuse })\n', replace: '' },
      { search: '  let recorder: UpstreamResponseTap | undefined\n', replace: '  if (refuse !== null) await app.register(amountLimitsPlugin, { store, clock, refuse })\n  let recorder: UpstreamResponseTap | undefined\n' },
    ],
    tests: ['test/callers/amount-limits.test.ts'],
  },
  {
    name: 'non-canonical-segment-admitted',
    rule: 'a segment a lenient provider may read as another (payouts;x, payouts.json) is refused (§3)',
    file: 'src/routing/path-guard.ts',
    edits: [{ search: '  if (problem !== null) {', replace: "  if (problem !== null && problem.kind === 'traversal') {" }],
    tests: ['test/callers/path-spellings.test.ts'],
  },
  {
    name: 'idempotency-key-as-sent',
    rule: 'one reference under any spelling of one path is one transaction (§3, §8)',
    file: 'src/idempotency/idempotency-plugin.ts',
    edits: [{ search: '      path: target.folded,\n', replace: '      path: target.path,\n' }],
    tests: ['test/callers/path-spellings.test.ts'],
  },
  {
    name: 'path-judged-after-allow',
    rule: 'with callers, path refusals come after identity and before allow (§3)',
    file: 'src/server.ts',
    edits: [
      { search: '  await app.register(pathGuard)\n', replace: '' },
      { search: '  await app.register(requestAudit, { metrics, via: deps.via })\n', replace: '  await app.register(pathGuard)\n  await app.register(requestAudit, { metrics, via: deps.via })\n' },
    ],
    tests: ['test/callers/path-spellings.test.ts'],
  },
  {
    name: 'console-origin-unchecked',
    rule: 'every console form must carry the console\'s own Origin (§14)',
    file: 'src/console/form-guard.ts',
    edits: [{ search: '    if (request.headers.origin === origin) return\n', replace: '    return\n' }],
    tests: ['test/console/bad-inputs.test.ts'],
  },
  {
    name: 'console-csrf-unchecked',
    rule: 'every console form carries this session\'s CSRF token (§14)',
    file: 'src/console/form-guard.ts',
    edits: [{ search: '    checks.push((request, reply, done) => { app.csrfProtection(request, reply, done) })\n', replace: '' }],
    tests: ['test/console/bad-inputs.test.ts'],
  },
  {
    name: 'console-reader-decides',
    rule: 'only PROXY_CONSOLE_APPROVERS decide, replay and recheck (§14)',
    file: 'src/console/form-guard.ts',
    edits: [{ search: '      if (request.person?.approver === true) return\n', replace: '      return\n' }],
    tests: ['test/console/bad-inputs.test.ts'],
  },
  {
    name: 'console-header-from-anyone',
    rule: 'the sign-in header is believed only from PROXY_CONSOLE_TRUSTED_PROXIES (§14)',
    file: 'src/console/console-identity.ts',
    edits: [{ search: '    if (!peerIn(options.trustedProxies, peer)) {', replace: '    if (false) {' }],
    tests: ['test/console/bad-inputs.test.ts'],
  },
  {
    name: 'console-link-reusable',
    rule: 'a sign-in link signs in once (§14)',
    file: 'src/console/sqlite-signin-store.ts',
    edits: [{ search: "    if (row.used === 1) return { kind: 'used', email: row.email }\n", replace: '' }],
    tests: ['test/console/bad-inputs.test.ts'],
  },
  {
    name: 'mcp-identity-skipped',
    rule: '/mcp identifies its caller before anything runs: 401 with WWW-Authenticate (§13)',
    file: 'src/mcp/mcp-endpoint.ts',
    edits: [{ search: "    if (typeof caller === 'string') { done(refuse(request, 'anonymous', new CallerUnauthenticatedError(caller))); return }\n", replace: "    if (typeof caller === 'string') { done(); return }\n" }],
    tests: ['test/mcp/mcp-endpoint.test.ts'],
  },
  {
    name: 'mcp-placeholder-takes-a-path',
    rule: 'an operator tool\'s placeholder is filled by exactly one canonical segment (§13)',
    file: 'src/mcp/path-template.ts',
    edits: [{ search: "  if (value === '' || value.includes('/')) return false\n", replace: "  if (value === '') return false\n" }],
    tests: ['test/mcp/path-template.test.ts', 'test/mcp/payments-request.test.ts'],
  },
  {
    name: 'mcp-target-read-from-the-injected-url',
    rule: 'a tool call\'s path meets §3\'s reader as built, as the same path over HTTP would (§13)',
    file: 'src/routing/request-target.ts',
    edits: [{ search: "readTarget(builtTarget?.(req) ?? req.url ?? '', prefixes, options)", replace: "readTarget(req.url ?? '', prefixes, options)" }],
    tests: ['test/mcp/same-outcome.test.ts'],
  },
  {
    name: 'mcp-batch-served',
    rule: 'a JSON-RPC batch is refused, not served as several tool calls (§13, BAD_INPUTS)',
    file: 'src/mcp/mcp-endpoint.ts',
    edits: [{ search: "    if (Array.isArray(parsed)) return await reply.code(400).type('application/json').send(BATCH_REFUSED)\n", replace: '' }],
    tests: ['test/mcp/mcp-endpoint.test.ts'],
  },
  {
    name: 'mcp-call-not-marked',
    rule: 'the access line of a tool call\'s request carries via and tool (§13)',
    file: 'src/mcp/tool-call-mark.ts',
    edits: [{ search: "  return request.toolCall === null ? null : { via: 'mcp', tool: request.toolCall.tool }", replace: '  return null' }],
    tests: ['test/mcp/payments-request.test.ts'],
  },
  {
    name: 'payment-forwarded-without-its-intent',
    rule: 'a followed POST whose intent cannot be stored is 503 STATE_UNAVAILABLE, never forwarded (§12)',
    file: 'src/payments/payment-follow-plugin.ts',
    edits: [{ search: 'done(err instanceof StateUnavailableError ? err : new StateUnavailableError(err))', replace: 'done()' }],
    tests: ['test/payments/bad-provider.test.ts'],
  },
  {
    name: 'payment-settled-by-an-unconfirmed-event',
    rule: 'a final event settles a payment only once a look-up agrees, by default (§12)',
    file: 'src/payments/payment-context.ts',
    edits: [{ search: "(record) => config.confirm === 'lookup' && ", replace: "(record) => false && config.confirm === 'lookup' && " }],
    tests: ['test/payments/bad-events.test.ts'],
  },
  {
    name: 'payment-looked-up-by-an-event-id-alone',
    rule: 'a transaction id named by an event settles nothing unless the look-up names the payment\'s reference (docs/payments.md)',
    file: 'src/payments/provider-reading.ts',
    edits: [{ search: "reference.kind === 'missing' && record.transactionIdFrom === 'event'", replace: 'false' }],
    tests: ['test/payments/provider-reading.test.ts'],
  },
]

const selected = process.argv.slice(2)
const unknown = selected.filter((n) => !MUTATIONS.some((m) => m.name === n))
if (unknown.length > 0) {
  console.error(`test-guards: no mutation named ${unknown.join(', ')}; known: ${MUTATIONS.map((m) => m.name).join(', ')}`)
  process.exit(2)
}
const mutations = MUTATIONS.filter((m) => selected.length === 0 || selected.includes(m.name))

const files = [...new Set(mutations.map((m) => m.file))]
const dirty = spawnSync('git', ['status', '--porcelain', '--', ...files], { cwd: root, encoding: 'utf8' })
if (dirty.status !== 0 || dirty.stdout.trim() !== '') {
  console.error(`test-guards: refusing to run: these files have uncommitted changes (the restore would lose them):\n${dirty.stdout || dirty.stderr}`)
  process.exit(2)
}

/** The original text of the file being mutated right now, so every way out restores it. */
let pending = null
function restore () {
  if (pending === null) return
  writeFileSync(join(root, pending.file), pending.text)
  pending = null
}
process.on('exit', restore)
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) process.on(signal, () => { restore(); process.exit(130) })

/** Runs the files, stopping at the first failure; `failure` names the first assertion that failed. */
function runTap (tests) {
  const started = Date.now()
  const run = spawnSync(join(root, 'node_modules/.bin/tap'), ['--bail', '--reporter=tap', ...tests], { cwd: root, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 })
  const failure = /^\s*(?:not ok \d+ - |Bail out! )(.*?)(?: # time=.*)?$/m.exec(run.stdout)?.[1] ?? ''
  return { failed: run.status !== 0, seconds: (Date.now() - started) / 1000, failure }
}

// The tests must pass unmutated, or every mutation would look killed.
const allTests = [...new Set(mutations.flatMap((m) => m.tests))]
const baseline = runTap(allTests)
if (baseline.failed) {
  console.error(`test-guards: the guard tests fail without any mutation; fix them first (npx tap ${allTests.join(' ')})`)
  process.exit(2)
}

/** The text with every edit applied, or the problem when a search text is missing or not unique. */
function applyEdits (text, edits) {
  let out = text
  for (const { search, replace } of edits) {
    const at = out.indexOf(search)
    if (at === -1) return { problem: `text not found: ${JSON.stringify(search.slice(0, 60))}` }
    if (out.indexOf(search, at + 1) !== -1) return { problem: `text not unique: ${JSON.stringify(search.slice(0, 60))}` }
    out = out.slice(0, at) + replace + out.slice(at + search.length)
  }
  return out
}

const rows = []
for (const m of mutations) {
  const path = join(root, m.file)
  const text = readFileSync(path, 'utf8')
  const mutated = applyEdits(text, m.edits)
  if (typeof mutated !== 'string') {
    rows.push({ ...m, result: `STALE (${mutated.problem})`, seconds: 0, failure: '' })
    continue
  }
  pending = { file: m.file, text }
  let outcome
  try {
    writeFileSync(path, mutated)
    outcome = runTap(m.tests)
  } finally {
    restore()
  }
  rows.push({ ...m, result: outcome.failed ? 'killed' : 'SURVIVED', seconds: outcome.seconds, failure: outcome.failure })
}

const line = (cells) => `| ${cells.join(' | ')} |`
console.log(line(['mutation', 'guard (SPEC)', 'tests', 'result', 'first failing assertion', 's']))
console.log(line(['---', '---', '---', '---', '---', '---:']))
for (const r of rows) console.log(line([r.name, r.rule, r.tests.join(' '), r.result, r.failure, r.seconds.toFixed(1)]))
const survivors = rows.filter((r) => r.result !== 'killed')
console.log(`\n${rows.length - survivors.length} of ${rows.length} killed (baseline ${baseline.seconds.toFixed(1)} s)`)
process.exit(survivors.length === 0 ? 0 : 1)
