/**
 * `npm run bench`: what does the sidecar cost per request?
 *
 * Measures, interleaved over several rounds, (a) the bench upstream served directly, (b) a bare
 * Fastify + @fastify/http-proxy proxy that only injects a header, (c) our proxy as users run it
 * (`node dist-bundle/cli.mjs` with npm start's Node options, LOG_LEVEL=info to a FIFO read into a file, metrics on), and
 * with --with-plain (d) plain node:http + undici. For four workloads (GET ~200 B, GET 64 KiB, POST
 * 2 KiB JSON without a reference, and the same with a new externalReference per request, each a
 * transaction the idempotency layer claims and records): req/s at saturation (wrk when installed, else autocannon; 50 keep-alive
 * connections), p50/p99 at a steady 2,000 req/s (wrk paced by its script, else an undici client),
 * peak RSS; then checks that each environment asked for exactly one token per refresh window.
 * Then, paired: our proxy and the bare one saturated at the same time on the same core, so their
 * CPU cost per request is compared at the same moment and the machine's drifting speed does not
 * move the ratio (the two share the core's caches meanwhile; bench/README.md).
 * Prints a markdown table and writes it, with the raw JSON, to bench/results/.
 *
 * Layout on a 2-core machine: core 0 = load generator, this script, and the upstream behind the
 * proxies; core 1 = the target under test (a proxy, or for (a) a second upstream instance). With 3+
 * cores the shared upstream gets core 2. Without taskset, nothing is pinned (noted in the results).
 *
 * Options: --rounds N (3) --duration S (5, saturation) --rate-duration S (3) --rate R (2000)
 * --rate-warmup S (2: paced at the rate, not recorded, before each latency measurement)
 * --connections C (50) --tool wrk|autocannon --quick (1 round, 2 s) --with-plain
 * --token-lifetime S (60) --refresh-margin S (20) --keep-log
 * --compare-cli PATH (adds target (e): another build of the proxy, e.g. a worktree of the previous
 * commit built with npm run build, for before/after figures in one run)
 * --compare-node-options=OPTS (Node options for target (e) instead of npm start's, e.g.
 * =--max-semi-space-size=4, or empty for none; without --compare-cli, (e) is this build run with them)
 * --bare-node-options=OPTS (Node options for the bare proxy (b), which otherwise runs with none, e.g.
 * ="--max-semi-space-size=8 --heap-growing-percent=100", npm start's: the two proxies with one
 * young generation's size, so what is compared is their code and not their memory)
 * --cli PATH (measure another build as (c); default dist-bundle/cli.mjs)
 * --callers N (target (e): this build with a callers file of N callers × 10 rules, requests sent
 * with the last caller's key, whose last rule is the one that matches; paired against (c), this is
 * what callers cost per request)
 * --variant-env NAME=VALUE[,NAME=VALUE] (target (e) with these settings added, alone or with
 * --compare-cli; e.g. PROXY_IDEMPOTENCY=off: paired against (c) on the idem workload, what the
 * idempotency layer costs per keyed POST)
 * --redis (our proxy (c) keeps its state in a local redis-server started for the run instead of
 * memory: with --variant-env PROXY_IDEMPOTENCY=off and --rate 1000, what Redis adds per keyed POST)
 * --approvals (issue 37: (c) and (e) both this build with one key-less caller and an amount limit;
 * (e) also has approveAbove, above every bench amount, so nothing is held: paired against (c), what
 * approvals configured but not triggered cost per request. With --redis, (e) is in Redis too)
 * --payments (issue 44: (c) with payments off, (e) this build with PROXY_PAYMENTS=on, its store in SQLite,
 * or in the local Redis with --redis; on the `followed` workload, what following a payout costs per POST)
 * --duplicates (issue 60: (c) and (e) both this build with PROXY_PAYMENTS=on, (c) with
 * PROXY_DUPLICATE_WINDOW_SECONDS=0, (e) with the check on; each payout to a recipient of its own, so
 * none is a duplicate; in SQLite, or in the local Redis with --redis: on the `followed` workload,
 * what the probable-duplicate check costs per followed POST)
 * --workloads payments runs bench/payments.mjs instead (event arrival -> settled, 100,000 pending);
 * --workloads webhooks runs bench/webhooks.mjs instead (the webhook inbox's intake and delivery figures);
 * --workloads burst runs bench/burst.mjs (1,000 webhook events sent at once: answered 200, the slowest answer);
 * --workloads webhooks-memory runs bench/webhooks-memory.mjs (its memory with 1,000,000 events stored).
 * --workloads console runs bench/console.mjs (the console's pending page, 10,000 pending approvals, 1,000,000 events).
 * --workloads mcp runs bench/mcp.mjs (a tool call over MCP against the same request over HTTP).
 * --workloads small,large,post,idem,followed --targets direct,bare,ours,plain,variant (subsets, for quick A/B runs;
 * our proxy and the --compare-cli build are always measured).
 */
import { mkdtempSync, mkdirSync, rmSync, statSync, writeFileSync, existsSync, createReadStream, readFileSync } from 'node:fs'
import { execFileSync } from 'node:child_process'
import { tmpdir, loadavg, cpus } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { cpuLayout, killAllNow, pinProcess, stopAll, stop } from './lib/processes.mjs'
import { CLI, CLI_ENTRY, FIAT_SANDBOX_BASE, OUR_NODE_ARGS, OUR_START_ENV, ROOT_DIR, getJson, getText, parseSettings, startOurProxy, startRedis, startReferenceProxy, startUpstream, writeApprovalsCallersFiles, writeCallersFile } from './lib/targets.mjs'
import { measure, measurePaired, wrkVersion, writeBodyFile } from './lib/measure.mjs'
import { checkTokens } from './lib/token-check.mjs'
import { markdown, summarise } from './lib/report.mjs'

const { values: argv } = parseArgs({
  options: {
    rounds: { type: 'string' },
    duration: { type: 'string' },
    'rate-duration': { type: 'string' },
    'rate-warmup': { type: 'string', default: '2' },
    rate: { type: 'string', default: '2000' },
    connections: { type: 'string', default: '50' },
    tool: { type: 'string' },
    quick: { type: 'boolean', default: false },
    'with-plain': { type: 'boolean', default: false },
    'token-lifetime': { type: 'string', default: '60' },
    'refresh-margin': { type: 'string', default: '20' },
    'keep-log': { type: 'boolean', default: false },
    'compare-cli': { type: 'string' },
    'compare-node-options': { type: 'string' },
    'bare-node-options': { type: 'string' },
    cli: { type: 'string' },
    workloads: { type: 'string', default: 'small,large,post,idem' },
    targets: { type: 'string' },
    callers: { type: 'string' },
    'variant-env': { type: 'string' },
    redis: { type: 'boolean', default: false },
    approvals: { type: 'boolean', default: false },
    payments: { type: 'boolean', default: false },
    duplicates: { type: 'boolean', default: false },
    'restart-each-round': { type: 'boolean', default: false },
    // bench/webhooks.mjs's own (with --workloads webhooks).
    'e2e-rate': { type: 'string' },
    senders: { type: 'string' },
    stores: { type: 'string' },
    keys: { type: 'string' },
    'proxy-rate': { type: 'string' },
    'proxy-rounds': { type: 'string' },
    'log-level': { type: 'string' },
    profile: { type: 'boolean' },
    phases: { type: 'string' },
    pin: { type: 'boolean' },
    'same-session': { type: 'boolean' },
    'no-control': { type: 'boolean' },
    'busy-rate': { type: 'string' },
    'node-args': { type: 'string' },
    'proxy-duration': { type: 'string' },
    syscalls: { type: 'boolean' },
    // bench/webhooks-memory.mjs's own (with --workloads webhooks-memory); --events is bench/burst.mjs's too.
    events: { type: 'string' },
    watch: { type: 'string' },
    // bench/console.mjs's own (with --workloads console; --events too) and bench/payments.mjs's
    // (with --workloads payments: --pending too).
    pending: { type: 'string' },
    requests: { type: 'string' },
    parts: { type: 'string' },
    // bench/burst.mjs's own (with --workloads burst).
    bytes: { type: 'string' },
    proxy: { type: 'string' },
  },
})
// The webhook inbox's figures are a script of their own (bench/webhooks.mjs): other targets, other loads.
if (argv.workloads === 'webhooks') {
  await import('./webhooks.mjs')
  process.exit(0)
}
// A burst of 1,000 webhook events sent at once (bench/burst.mjs).
if (argv.workloads === 'burst') {
  await import('./burst.mjs')
  process.exit(0)
}
if (argv.workloads === 'webhooks-memory') {
  await import('./webhooks-memory.mjs')
  process.exit(0)
}
// The console's pending page with 10,000 pending approvals and 1,000,000 events (bench/console.mjs).
if (argv.workloads === 'console') {
  await import('./console.mjs')
  process.exit(0)
}
// Agents over MCP (issue 45): a tool call against the same request over HTTP (bench/mcp.mjs).
if (argv.workloads === 'mcp') {
  await import('./mcp.mjs')
  process.exit(0)
}
// Payments followed (issue 44): event arrival -> settled, 100,000 pending (bench/payments.mjs).
if (argv.workloads === 'payments') {
  await import('./payments.mjs')
  process.exit(0)
}
const positive = (name, value) => {
  const n = Number(value)
  if (!Number.isFinite(n) || n <= 0) throw new Error(`--${name} must be a positive number, got ${value}`)
  return n
}
const nonNegative = (name, value) => {
  const n = Number(value)
  if (!Number.isFinite(n) || n < 0) throw new Error(`--${name} must be zero or a positive number, got ${value}`)
  return n
}
/**
 * Target (e): another build, this build with other Node options, or both; null when not asked for.
 * Its Node options are --compare-node-options when given (empty: none at all), else the same as
 * our proxy's.
 */
function variantTarget () {
  const cli = argv['compare-cli']
  const options = argv['compare-node-options']
  const env = argv['variant-env'] === undefined ? null : parseSettings('--variant-env', argv['variant-env'])
  if (argv.duplicates) {
    if (cli !== undefined || options !== undefined || env !== null || argv.callers !== undefined || argv.approvals || argv.payments) throw new Error('--duplicates measures this build as (e): it does not combine with --compare-cli, --compare-node-options, --variant-env, --callers, --approvals or --payments')
    return { cli: CLI, nodeArgs: OUR_NODE_ARGS, env: PAYMENTS_ON, payments: true, label: `(e) this build, PROXY_PAYMENTS=on and the duplicate check on (window 900 s${argv.redis ? ', in Redis' : ', in SQLite'})` }
  }
  if (argv.payments) {
    if (cli !== undefined || options !== undefined || env !== null || argv.callers !== undefined || argv.approvals) throw new Error('--payments measures this build as (e): it does not combine with --compare-cli, --compare-node-options, --variant-env, --callers or --approvals')
    return { cli: CLI, nodeArgs: OUR_NODE_ARGS, env: PAYMENTS_ON, payments: true, label: `(e) this build, PROXY_PAYMENTS=on (each payout followed${argv.redis ? ', in Redis' : ', in SQLite'})` }
  }
  if (argv.approvals) {
    if (cli !== undefined || options !== undefined || env !== null || argv.callers !== undefined) throw new Error('--approvals measures this build as (e): it does not combine with --compare-cli, --compare-node-options, --variant-env or --callers')
    return { cli: CLI, nodeArgs: OUR_NODE_ARGS, env: {}, approvals: true, label: '(e) this build, approveAbove configured above every amount (nothing held)' }
  }
  if (argv.callers !== undefined) {
    if (cli !== undefined || options !== undefined || env !== null) throw new Error('--callers measures this build as (e): it does not combine with --compare-cli, --compare-node-options or --variant-env')
    const count = positive('callers', argv.callers)
    return { cli: CLI, nodeArgs: OUR_NODE_ARGS, env: {}, callers: count, label: `(e) this build, ${count.toLocaleString('en-US')} callers × 10 rules, as the last caller` }
  }
  if (cli === undefined && options === undefined && env === null) return null
  const nodeArgs = options === undefined ? OUR_NODE_ARGS : options.split(/\s+/).filter((a) => a !== '')
  const build = cli === undefined ? 'this build' : '--compare-cli build'
  const settings = env === null ? '' : `, ${Object.entries(env).map(([name, value]) => `${name}=${value}`).join(' ')}`
  return { cli: cli ?? CLI, nodeArgs, env: env ?? {}, label: `(e) ${build}${options === undefined ? '' : nodeArgs.length === 0 ? ' without Node options' : ` with ${nodeArgs.join(' ')}`}${settings}` }
}

/**
 * --payments: (e) follows every payout. From a payment's first minute on it is looked up at 5/s (the
 * bench upstream answers 404: a failed look-up, the next step), and nothing settles, so no
 * notification is sent: what is measured is the follow on the request path.
 */
const PAYMENTS_ON = { PROXY_PAYMENTS: 'on', PROXY_SEALING_SECRET: `whsec_${Buffer.alloc(32, 45).toString('base64')}`, PROXY_PAYMENTS_NOTIFY_URL: 'http://127.0.0.1:9/notifications', PROXY_WEBHOOK_SIGNING_SECRET: `whsec_${Buffer.alloc(32, 44).toString('base64')}`, PROXY_WEBHOOK_STORE_PATH: './payments/webhooks.db' }
const VARIANT = variantTarget()
const BARE_NODE_ARGS = (argv['bare-node-options'] ?? '').split(/\s+/).filter((a) => a !== '')
const ROUNDS = positive('rounds', argv.rounds ?? (argv.quick ? 1 : 3))
const DURATION_S = positive('duration', argv.duration ?? (argv.quick ? 2 : 5))
const RATE_DURATION_S = positive('rate-duration', argv['rate-duration'] ?? (argv.quick ? 2 : 3))
const RATE = positive('rate', argv.rate)
/** The paced load generator is a new process per measurement; its cold start is not the target's latency (load.mjs). */
const RATE_WARMUP_S = nonNegative('rate-warmup', argv['rate-warmup'])
const CONNECTIONS = positive('connections', argv.connections)
const TOKEN_LIFETIME_S = positive('token-lifetime', argv['token-lifetime'])
const REFRESH_MARGIN_S = positive('refresh-margin', argv['refresh-margin'])
const WARMUP_S = 1
/**
 * Our proxy and (e) started afresh before every round: one process of a build can run some percent
 * faster or slower than another for its whole life (docs/performance.md), so a ratio between two
 * long-lived processes is partly their luck. Each new process warms up as long as a round runs,
 * so a memory store fills again first. The token check needs one long-lived process and is skipped.
 */
const RESTART = argv['restart-each-round']
if (RESTART && VARIANT === null) throw new Error('--restart-each-round compares our proxy with (e): give --compare-cli, --compare-node-options, --variant-env, --callers or --approvals')
const WRK = wrkVersion()
const TOOL = argv.tool ?? (WRK !== null ? 'wrk' : 'autocannon')
if (TOOL !== 'wrk' && TOOL !== 'autocannon') throw new Error('--tool must be wrk or autocannon')
if (TOOL === 'wrk' && WRK === null) throw new Error('--tool wrk: wrk is not installed (apt-get install -y wrk)')
if (!existsSync(argv.cli ?? CLI)) throw new Error(`${CLI} is missing: run npm run build first (npm run bench does)`)

const layout = cpuLayout()
const LOAD_CORE = layout.pinning ? 0 : null
const TARGET_CORE = layout.pinning ? 1 : null
const UPSTREAM_CORE = layout.pinning ? (layout.cores >= 3 ? 2 : 0) : null

const scratch = mkdtempSync(join(tmpdir(), 'payments-auth-proxy-bench-'))
const logFile = join(scratch, 'proxy.log')
const postBody = makePostBody(2048)
const postBodyFile = writeBodyFile(join(scratch, 'post-body.json'), postBody)
// `[<id>]` is replaced by a new id per request (autocannon's idReplacement, load.mjs, wrk-report.lua).
const idemBody = makePostBody(2048, 'bench-[<id>]')
const idemBodyFile = writeBodyFile(join(scratch, 'idem-body.json'), idemBody)
// --duplicates: a recipient the check reads, a new one each, so that no payout is a duplicate of another.
const followedBody = argv.duplicates ? makePostBody(2048, 'bench-[<id>]', { payoutMethod: { accountNumber: '2547[<id>]' } }) : idemBody
const followedBodyFile = argv.duplicates ? writeBodyFile(join(scratch, 'followed-body.json'), followedBody) : idemBodyFile

const ALL_WORKLOADS = [
  { name: 'small', label: 'GET ~200 B', method: 'GET', path: '/bench/small' },
  { name: 'large', label: 'GET 64 KiB', method: 'GET', path: '/bench/large' },
  { name: 'post', label: 'POST 2 KiB JSON', method: 'POST', path: '/bench/echo', body: postBody, bodyFile: postBodyFile },
  // Every request a new transaction: a claim and a recorded answer each (SPEC §8, memory store).
  { name: 'idem', label: 'POST 2 KiB JSON, a new externalReference each', method: 'POST', path: '/bench/echo', body: idemBody, bodyFile: idemBodyFile, uniqueIds: true },
  // The same, to a payout answered pending with a transaction id: with payments on, each one followed (SPEC §12).
  { name: 'followed', label: 'POST 2 KiB JSON payout, a new externalReference each, answered pending with a transaction id', method: 'POST', path: '/bench/payout', body: followedBody, bodyFile: followedBodyFile, uniqueIds: true },
]
const WORKLOADS = argv.workloads.split(',').map((name) => {
  const workload = ALL_WORKLOADS.find((w) => w.name === name.trim())
  if (workload === undefined) throw new Error(`--workloads: unknown workload "${name}" (${ALL_WORKLOADS.map((w) => w.name).join(', ')})`)
  return workload
})

let interrupted = false
const onSignal = (signal) => {
  if (interrupted) return
  interrupted = true
  process.stderr.write(`\n${signal}: stopping everything the benchmark started\n`)
  stopAll().finally(() => { rmSync(scratch, { recursive: true, force: true }); process.exit(130) })
}
process.on('SIGINT', onSignal)
process.on('SIGTERM', onSignal)
process.on('exit', killAllNow)

try {
  await main()
} catch (err) {
  if (!interrupted) {
    process.stderr.write(`bench failed: ${err.stack ?? err}\n`)
    process.exitCode = 1
  }
} finally {
  await stopAll()
  if (argv['keep-log']) process.stderr.write(`kept ${logFile}\n`)
  else rmSync(scratch, { recursive: true, force: true })
}

async function main () {
  const startedAt = new Date()
  const loadBefore = loadavg()
  if (LOAD_CORE !== null) pinProcess(process.pid, LOAD_CORE)
  log(`layout: ${layout.pinning ? `load generator + this script on core ${LOAD_CORE}, target on core ${TARGET_CORE}, shared upstream on core ${UPSTREAM_CORE}` : 'not pinned (no taskset or < 2 cores)'}; saturation tool: ${TOOL}`)

  const upstream = await startUpstream('upstream', { core: UPSTREAM_CORE, tokenLifetimeS: TOKEN_LIFETIME_S })
  const directUpstream = await startUpstream('direct upstream', { core: TARGET_CORE, tokenLifetimeS: TOKEN_LIFETIME_S })
  const bare = await startReferenceProxy('bare proxy', 'bare-proxy.mjs', { core: TARGET_CORE, upstreamOrigin: upstream.origin, nodeArgs: BARE_NODE_ARGS })
  const plain = argv['with-plain'] ? await startReferenceProxy('plain proxy', 'plain-proxy.mjs', { core: TARGET_CORE, upstreamOrigin: upstream.origin }) : null
  // On the upstream's core: like the upstream, it is the proxy's network peer, not the proxy.
  const redis = argv.redis ? await startRedis({ core: UPSTREAM_CORE, dir: scratch }) : null
  const oursStartedMs = Date.now()
  const redisEnv = redis === null ? {} : { PROXY_REDIS_URL: redis.url }
  // --approvals: the same caller and amount limit for both, approveAbove for (e) only.
  const approvalsEnv = VARIANT?.approvals === true ? writeApprovalsCallersFiles(scratch) : null
  const startOurs = () => startOurProxy({
    cli: argv.cli ?? CLI, core: TARGET_CORE, upstreamOrigin: upstream.origin, logFile, cwd: scratch, refreshMarginS: REFRESH_MARGIN_S,
    extraEnv: { ...redisEnv, ...approvalsEnv?.ours, ...(argv.duplicates ? { ...PAYMENTS_ON, PROXY_WEBHOOK_STORE_PATH: './payments-c/webhooks.db', PROXY_DUPLICATE_WINDOW_SECONDS: '0' } : {}) },
  })
  let ours = await startOurs()
  // The variant gets its own upstream, so the token check of our proxy stays exact.
  const variantUpstream = VARIANT === null ? null : await startUpstream('variant upstream', { core: UPSTREAM_CORE, tokenLifetimeS: TOKEN_LIFETIME_S })
  const callersFile = join(scratch, 'callers.json')
  const callerKey = VARIANT?.callers === undefined ? undefined : writeCallersFile(callersFile, VARIANT.callers)
  const startVariant = () => startOurProxy({
    name: 'variant proxy', cli: VARIANT.cli, nodeArgs: VARIANT.nodeArgs, core: TARGET_CORE, upstreamOrigin: variantUpstream.origin, logFile: join(scratch, 'variant.log'), cwd: scratch, refreshMarginS: REFRESH_MARGIN_S,
    extraEnv: { ...VARIANT.env, ...(callerKey === undefined ? {} : { PROXY_CALLERS_FILE: callersFile }), ...(approvalsEnv === null ? {} : { ...redisEnv, ...approvalsEnv.variant }), ...(VARIANT.payments === true ? redisEnv : {}) },
  })
  let variant = variantUpstream === null ? null : await startVariant()

  const allTargets = [
    { name: 'direct', label: '(a) upstream direct', base: `${directUpstream.origin}${FIAT_SANDBOX_BASE}`, pid: directUpstream.proc.pid, auth: 'Bearer bench-static' },
    { name: 'bare', label: `(b) bare Fastify + http-proxy${BARE_NODE_ARGS.length === 0 ? '' : ` with ${BARE_NODE_ARGS.join(' ')}`}`, base: `${bare.origin}/fiat`, pid: bare.proc.pid },
    ...(plain === null ? [] : [{ name: 'plain', label: '(d) node:http + undici', base: `${plain.origin}/fiat`, pid: plain.proc.pid }]),
    { name: 'ours', label: `(c) payments-auth-proxy${redis === null ? '' : ', state in a local redis-server'}`, base: `${ours.origin}/fiat`, pid: ours.proc.pid },
    ...(variant === null ? [] : [{ name: 'variant', label: VARIANT.label, base: `${variant.origin}/fiat`, pid: variant.proc.pid, auth: callerKey === undefined ? undefined : `Bearer ${callerKey}` }]),
  ]
  const wanted = argv.targets?.split(',').map((t) => t.trim())
  const targets = wanted === undefined ? allTargets : allTargets.filter((t) => t.name === 'ours' || t.name === 'variant' || wanted.includes(t.name))
  const requestFor = (target, workload) => ({
    url: `${target.base}${workload.path}`,
    method: workload.method,
    headers: {
      ...(target.auth === undefined ? {} : { authorization: target.auth }),
      ...(workload.body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    body: workload.body ?? null,
    bodyFile: workload.bodyFile,
    uniqueIds: workload.uniqueIds === true,
  })
  const one = (kind, target, workload, durationS) => measure({
    kind, tool: TOOL, request: requestFor(target, workload), connections: CONNECTIONS, durationS, rate: RATE, warmupS: RATE_WARMUP_S,
    loadCore: LOAD_CORE, targetCore: TARGET_CORE, targetPid: target.pid,
  })

  log(`warming up (${WARMUP_S} s per target and workload)`)
  for (const workload of WORKLOADS) for (const target of targets) await one('saturate', target, workload, WARMUP_S)

  /** --restart-each-round: new processes for our proxy and (e) (the first round's are new already), warmed up as long as a round runs. */
  const freshOwn = async (restart) => {
    if (!RESTART) return
    for (const target of restart ? targets : []) {
      if (interrupted) return
      if (target.name === 'ours') {
        await stop(ours.proc)
        ours = await startOurs()
        Object.assign(target, { base: `${ours.origin}/fiat`, pid: ours.proc.pid })
      } else if (target.name === 'variant') {
        await stop(variant.proc)
        variant = await startVariant()
        Object.assign(target, { base: `${variant.origin}/fiat`, pid: variant.proc.pid })
      }
    }
    log(`${restart ? 'our proxy and (e) started afresh; ' : ''}warming them up (${DURATION_S} s each per workload)`)
    for (const workload of WORKLOADS) {
      for (const target of targets) {
        if (interrupted) return
        if (target.name === 'ours' || target.name === 'variant') await one('saturate', target, workload, DURATION_S)
      }
    }
  }

  const measurements = []
  for (let round = 1; round <= ROUNDS; round++) {
    await freshOwn(round > 1)
    for (const workload of WORKLOADS) {
      // Rotate the order every round so no target always runs first (or right after another).
      const order = targets.map((_, i) => targets[(i + round - 1) % targets.length])
      for (const target of order) {
        for (const [kind, durationS] of [['saturate', DURATION_S], ['rate', RATE_DURATION_S]]) {
          if (interrupted) return
          const m = await one(kind, target, workload, durationS)
          measurements.push({ round, workload: workload.name, target: target.name, kind, ...m })
          log(`round ${round}/${ROUNDS} ${workload.name.padEnd(5)} ${target.name.padEnd(6)} ${kind === 'saturate' ? `${String(m.rps).padStart(6)} req/s  cpu ${m.targetCpuPct}%  ${m.rpsPerCpuS} req/CPU-s` : `p50 ${m.latencyMs.p50} ms p99 ${m.latencyMs.p99} ms`}  rss ${Math.round(m.peakRssKb / 1024)} MB  foreign ${m.foreignCpuPctOnTargetCore}%${m.non2xx + m.errors > 0 ? `  FAILED ${m.non2xx + m.errors}` : ''}`)
        }
      }
    }
  }

  // Paired: our proxy and the bare one (and (e)) saturated at the same time on the target core,
  // each by its own load generator. Their CPU cost per request is then measured on the same
  // machine at the same moment, which the interleaved rounds above cannot promise.
  const oursTarget = targets.find((t) => t.name === 'ours')
  const partners = targets.filter((t) => t.name === 'bare' || t.name === 'variant')
  const paired = []
  for (let round = 1; round <= ROUNDS; round++) {
    // The interleaved rounds' last processes, warm, go on into the first paired round.
    if (round > 1) await freshOwn(true)
    for (const workload of WORKLOADS) {
      for (const partner of partners) {
        if (interrupted) return
        // Alternate which load generator starts first.
        const pair = round % 2 === 1 ? [oursTarget, partner] : [partner, oursTarget]
        const results = await measurePaired({
          tool: TOOL, runs: pair.map((t) => ({ request: requestFor(t, workload), targetPid: t.pid })), connections: CONNECTIONS, durationS: DURATION_S, loadCore: LOAD_CORE,
        })
        const ours = results[pair.indexOf(oursTarget)]
        const other = results[pair.indexOf(partner)]
        paired.push({ round, workload: workload.name, partner: partner.name, ours, other })
        const failed = ours.errors + ours.non2xx + other.errors + other.non2xx
        log(`round ${round}/${ROUNDS} ${workload.name.padEnd(5)} paired ours+${partner.name}: ${ours.rpsPerCpuS} vs ${other.rpsPerCpuS} req/CPU-s${failed > 0 ? `  FAILED ${failed}` : ''}`)
      }
    }
  }
  const endedMs = Date.now()

  const upstreamStats = await getJson(`${upstream.origin}/__bench/stats`)
  const metricsText = await getText(`${ours.origin}/metrics`)
  await stop(ours.proc)
  const logStats = await countLog(logFile)
  const tokens = checkTokens({
    tokenRequests: upstreamStats.tokenRequests,
    requests: upstreamStats.requests,
    tokenRejected: upstreamStats.tokenRejected,
    startedMs: oursStartedMs,
    endedMs,
    tokenLifetimeS: TOKEN_LIFETIME_S,
    refreshMarginS: REFRESH_MARGIN_S,
    perWindow: !RESTART,
  })
  const summary = summarise(measurements, WORKLOADS, targets, paired)
  const loadAfter = loadavg()
  const conditions = [
    `date ${startedAt.toISOString()}, ${Math.round((Date.now() - startedAt.getTime()) / 1000)} s in all; commit ${git(['rev-parse', '--short', 'HEAD'])}${git(['status', '--porcelain', '--', 'src']) === '' ? '' : ' with uncommitted changes in src/'}`,
    `${cpus()[0]?.model ?? 'unknown CPU'}, ${layout.cores} cores; Node ${process.version}; ${TOOL === 'wrk' ? `${WRK} at saturation and, paced by its script, at ${RATE} req/s` : `autocannon ${pkgVersion('autocannon')} at saturation, an undici-paced client at ${RATE} req/s`}`,
    layout.pinning
      ? `pinned with taskset: core ${LOAD_CORE} = load generator + bench script${UPSTREAM_CORE === LOAD_CORE ? ' + the upstream behind the proxies' : ''}; core ${TARGET_CORE} = the target alone (for (a), a second upstream instance)${UPSTREAM_CORE !== LOAD_CORE ? `; core ${UPSTREAM_CORE} = the upstream behind the proxies` : ''}`
      : 'not pinned (no taskset or fewer than 2 cores): all processes share the cores',
    `${ROUNDS} round(s), interleaved, per target and workload: ${DURATION_S} s at saturation and ${RATE_DURATION_S} s at ${RATE} req/s (after ${RATE_WARMUP_S} s at that rate, not recorded), ${CONNECTIONS} keep-alive connections; ${WARMUP_S} s warm-up each before the first round; then ${ROUNDS} paired round(s) of ${DURATION_S} s, our proxy and each comparison proxy saturated at the same time on the target core (${CONNECTIONS} connections each)`,
    `our proxy: ${[...Object.entries(OUR_START_ENV).map(([name, value]) => `${name}=${value}`), 'node', ...OUR_NODE_ARGS, argv.cli ?? CLI_ENTRY].join(' ')} (as npm start runs it), LOG_LEVEL=info to a FIFO read into a file (${logStats.lines.toLocaleString('en-US')} lines, ${Math.round(logStats.bytes / 1048576)} MB, ${logStats.warnOrWorse} at warn or worse${logStats.warnOrWorse > 0 ? `: ${Object.entries(logStats.warnMessages).map(([msg, n]) => `${n} × "${msg}"`).join(', ')}` : ''}), metrics on, both environments configured, sandbox default, PROXY_EGRESS_IP_URL=off, ${redis === null ? 'state in memory' : `state in a local redis-server ${redisVersion()} on the upstream's core (PROXY_REDIS_URL)`}`,
    `tokens: the upstream issues ${TOKEN_LIFETIME_S} s tokens and the proxy refreshes ${REFRESH_MARGIN_S} s before expiry, so several refresh windows pass during the run`,
    ...(RESTART ? [`--restart-each-round: our proxy and (e) were started afresh before rounds 2–${ROUNDS} of both the interleaved and the paired measurements, and warmed up ${DURATION_S} s per workload before every interleaved round and every restarted paired round`] : []),
    `machine load (1-min load average) ${loadBefore[0].toFixed(2)} before, ${loadAfter[0].toFixed(2)} after; other processes took up to ${Math.max(...measurements.map((m) => m.foreignCpuPctOnTargetCore ?? 0))}% (median ${medianOf(measurements.map((m) => m.foreignCpuPctOnTargetCore))}%) of the target's core during measurements`,
  ]
  const notes = []
  if (TOOL === 'autocannon') notes.push('autocannon is a Node process on one core: the direct upstream can answer faster than it can ask, so (a) req/s is the load generator\'s ceiling, not the upstream\'s. Install wrk for a higher ceiling.')
  const directLoad = summary.rows.small?.direct?.loadCoreBusyPct ?? null
  if (directLoad !== null && directLoad >= 95) notes.push(`during (a) the load core was ${directLoad}% busy: (a) req/s is bounded by the load generator.`)
  for (const workload of WORKLOADS) {
    for (const target of targets) {
      const achieved = summary.rows[workload.name][target.name].achievedRate
      if (achieved !== null && achieved < RATE * 0.97) notes.push(`${workload.label}, ${target.label}: completed ${achieved.toLocaleString('en-US')} req/s of the ${RATE.toLocaleString('en-US')} asked for. The rate is past what it can serve on this machine, so its p50/p99 measure the queue that built up, not the proxy.`)
    }
  }
  if (TOOL === 'wrk') {
    for (const workload of WORKLOADS) {
      for (const target of targets) {
        const late = measurements.filter((m) => m.kind === 'rate' && m.workload === workload.name && m.target === target.name && m.lateSends > 0)
        if (late.length > 0) notes.push(`${workload.label}, ${target.label}: in ${late.length} latency round(s), ${late.reduce((n, m) => n + m.lateSends, 0).toLocaleString('en-US')} sends went out more than 1 ms after their slot (up to ${Math.max(...late.map((m) => m.scheduleLagMs.max)).toFixed(1)} ms), each after an answer slower than a connection's turn (${Math.round((CONNECTIONS / RATE) * 1000)} ms at ${CONNECTIONS} connections): the target stalled, and those waits are not in its p99 (wrk times a request from its write).`)
      }
    }
  } else if (measurements.some((m) => m.kind === 'rate' && (m.scheduleLagMs?.p99 ?? 0) > 5)) {
    notes.push('the paced client fell behind its schedule by more than 5 ms at p99 in some measurement: latency figures of that round are suspect.')
  }
  if (Math.max(...measurements.map((m) => m.foreignCpuPctOnTargetCore ?? 0)) > 10) notes.push('other processes used more than 10% of the target core in some measurement: figures are noisy; rerun on a quiet machine for reference numbers.')

  const title = `payments-auth-proxy benchmark, ${startedAt.toISOString().slice(0, 16).replace('T', ' ')} UTC`
  const md = markdown({ title, conditions, summary, workloads: WORKLOADS, targets, tokens, notes })
  const resultsDir = join(ROOT_DIR, 'bench', 'results')
  mkdirSync(resultsDir, { recursive: true })
  const stamp = startedAt.toISOString().replace(/[:.]/g, '-')
  writeFileSync(join(resultsDir, `${stamp}.md`), `${md}\n`)
  writeFileSync(join(resultsDir, `${stamp}.json`), `${JSON.stringify({
    startedAt, options: { ROUNDS, DURATION_S, RATE_DURATION_S, RATE_WARMUP_S, RATE, CONNECTIONS, TOOL, TOKEN_LIFETIME_S, REFRESH_MARGIN_S, layout: { ...layout, LOAD_CORE, TARGET_CORE, UPSTREAM_CORE } },
    conditions, summary, tokens, upstreamStats, logStats, metrics: pickMetrics(metricsText),
    // The 1,001 quantiles per latency round are pooled into the summary; kept, they would triple the file.
    measurements: measurements.map(({ latencyQuantilesMs, ...m }) => m),
    paired,
  }, null, 2)}\n`)
  process.stdout.write(`\n${md}\nwritten to bench/results/${stamp}.md and .json\n`)
  const failed = [...measurements, ...paired.flatMap((p) => [p.ours, p.other])].reduce((n, m) => n + m.non2xx + m.errors, 0)
  if (!tokens.ok || failed > 0) {
    process.stderr.write(`bench: ${!tokens.ok ? 'token check failed' : ''}${!tokens.ok && failed > 0 ? '; ' : ''}${failed > 0 ? `${failed} failed requests` : ''}\n`)
    process.exitCode = 1
  }
}

function log (line) {
  process.stderr.write(`[bench ${new Date().toISOString().slice(11, 19)}] ${line}\n`)
}

function makePostBody (size, externalReference, extra = {}) {
  // Without a reference, or with one per request: a fixed one would make every POST after the first a replay (SPEC §8).
  const base = { ...(externalReference === undefined ? {} : { externalReference }), amount: 1500, currency: 'KES', recipient: { name: 'Jane Doe', phone: '+254700000000', method: 'mobile_money' }, ...extra, narration: '' }
  const text = JSON.stringify(base)
  return JSON.stringify({ ...base, narration: 'n'.repeat(size - text.length) })
}

async function countLog (file) {
  let lines = 0
  let warnOrWorse = 0
  let bytes = 0
  const warnMessages = {}
  try { bytes = statSync(file).size } catch { return { lines, bytes, warnOrWorse, warnMessages } }
  let rest = ''
  for await (const chunk of createReadStream(file, { encoding: 'utf8' })) {
    const parts = (rest + chunk).split('\n')
    rest = parts.pop()
    for (const line of parts) {
      lines++
      const m = line.match(/"level":(\d+)/)
      if (m !== null && Number(m[1]) >= 40) {
        warnOrWorse++
        const msg = line.match(/"msg":"([^"]*)"/)?.[1] ?? '?'
        warnMessages[msg] = (warnMessages[msg] ?? 0) + 1
      }
    }
  }
  return { lines, bytes, warnOrWorse, warnMessages }
}

function pickMetrics (text) {
  return text.split('\n').filter((l) => /^payments_auth_proxy_(requests_total|token_refreshes_total|token_wait_seconds_count)/.test(l))
}

function git (args) {
  try { return execFileSync('git', args, { cwd: ROOT_DIR, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim() } catch { return 'unknown' }
}

function pkgVersion (name) {
  try { return JSON.parse(readFileSync(join(ROOT_DIR, 'node_modules', name, 'package.json'), 'utf8')).version } catch { return '?' }
}

function medianOf (xs) {
  const s = xs.filter((x) => typeof x === 'number').sort((a, b) => a - b)
  return s.length === 0 ? 0 : s[s.length >> 1]
}

function redisVersion () {
  try {
    return execFileSync('redis-server', ['--version'], { encoding: 'utf8' }).match(/v=(\S+)/)?.[1] ?? ''
  } catch {
    return ''
  }
}
