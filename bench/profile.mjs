/**
 * CPU profile of our proxy under load: the bench upstream on the load core, `node --cpu-prof
 * dist-bundle/cli.mjs` (with npm start's Node options, LOG_LEVEL=info to a FIFO read into a file, as in the benchmark) on
 * the target core, saturated by wrk
 * (or autocannon) for --duration seconds after a warm-up; then the proxy is stopped with SIGTERM
 * (it writes the profile on exit) and the profile is summarised with cpuprofile-summary.mjs.
 * Writes bench/results/profile-<stamp>.md and the .cpuprofile (open it in Chrome DevTools or
 * speedscope for a flame graph).
 *
 *   node bench/profile.mjs [--workload small|large|post|idem|followed] [--duration S (15)] [--interval US (250)]
 *                          [--cli PATH (dist-bundle/cli.mjs)] [--log-level L (info)] [--target ours|bare]
 *                          [--callers N (a callers file of N callers x 10 rules, as in npm run bench)]
 *                          [--env NAME=VALUE,... (settings added to our proxy's, e.g. PROXY_IDEMPOTENCY=off)]
 * --target bare profiles the bare Fastify + @fastify/http-proxy proxy instead, for comparison.
 */
import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { cpuLayout, killAllNow, pinProcess, stop, stopAll } from './lib/processes.mjs'
import { CLI, CLI_ENTRY, OUR_NODE_ARGS, ROOT_DIR, parseSettings, startOurProxy, startReferenceProxy, startUpstream, writeCallersFile } from './lib/targets.mjs'
import { measure, wrkVersion, writeBodyFile } from './lib/measure.mjs'
import { formatSummary, summariseProfile } from './cpuprofile-summary.mjs'

const { values: argv } = parseArgs({
  options: {
    workload: { type: 'string', default: 'small' },
    duration: { type: 'string', default: '15' },
    interval: { type: 'string', default: '250' },
    cli: { type: 'string', default: CLI },
    'log-level': { type: 'string', default: 'info' },
    tool: { type: 'string' },
    target: { type: 'string', default: 'ours' },
    callers: { type: 'string' },
    env: { type: 'string' },
  },
})
const WORKLOADS = {
  small: { method: 'GET', path: '/bench/small' },
  large: { method: 'GET', path: '/bench/large' },
  post: { method: 'POST', path: '/bench/echo', body: JSON.stringify({ amount: 1500, currency: 'KES', narration: 'n'.repeat(1950) }) },
  // `[<id>]` becomes a new id per request: every request a new transaction, claimed and recorded.
  idem: { method: 'POST', path: '/bench/echo', body: JSON.stringify({ externalReference: 'bench-[<id>]', amount: 1500, currency: 'KES', narration: 'n'.repeat(1920) }), uniqueIds: true },
  // The same as a payout answered pending with a transaction id: followed with PROXY_PAYMENTS=on (SPEC §12), each to a
  // recipient of its own, which the duplicate check (SPEC §16) reads and finds no earlier payout of.
  followed: { method: 'POST', path: '/bench/payout', body: JSON.stringify({ externalReference: 'bench-[<id>]', amount: 1500, currency: 'KES', payoutMethod: { accountNumber: '2547[<id>]' }, narration: 'n'.repeat(1880) }), uniqueIds: true },
}
const workload = WORKLOADS[argv.workload]
if (workload === undefined) throw new Error('--workload must be small, large, post, idem or followed')
if (argv.target !== 'ours' && argv.target !== 'bare') throw new Error('--target must be ours or bare')
const tool = argv.tool ?? (wrkVersion() !== null ? 'wrk' : 'autocannon')
const layout = cpuLayout()
const LOAD_CORE = layout.pinning ? 0 : null
const TARGET_CORE = layout.pinning ? 1 : null
const scratch = mkdtempSync(join(tmpdir(), 'payments-auth-proxy-profile-'))
process.on('exit', killAllNow)
process.on('SIGINT', () => { stopAll().finally(() => { rmSync(scratch, { recursive: true, force: true }); process.exit(130) }) })

try {
  if (LOAD_CORE !== null) pinProcess(process.pid, LOAD_CORE)
  const upstream = await startUpstream('upstream', { core: LOAD_CORE, tokenLifetimeS: 3600 })
  const callerKey = argv.callers === undefined ? undefined : writeCallersFile(join(scratch, 'callers.json'), Number(argv.callers))
  const profiling = ['--cpu-prof', `--cpu-prof-dir=${scratch}`, `--cpu-prof-interval=${Number(argv.interval)}`]
  const target = argv.target === 'bare'
    ? await startReferenceProxy('bare proxy', 'bare-proxy.mjs', { core: TARGET_CORE, upstreamOrigin: upstream.origin, nodeArgs: profiling })
    : await startOurProxy({
      core: TARGET_CORE,
      upstreamOrigin: upstream.origin,
      logFile: join(scratch, 'proxy.log'),
      cwd: scratch,
      refreshMarginS: 300,
      logLevel: argv['log-level'],
      cli: argv.cli,
      nodeArgs: [...OUR_NODE_ARGS, ...profiling],
      extraEnv: {
        ...(argv.env === undefined ? {} : parseSettings('--env', argv.env)),
        ...(callerKey === undefined ? {} : { PROXY_CALLERS_FILE: join(scratch, 'callers.json') }),
      },
    })
  const request = {
    url: `${target.origin}/fiat${workload.path}`,
    method: workload.method,
    headers: { ...(workload.body === undefined ? {} : { 'content-type': 'application/json' }), ...(callerKey === undefined ? {} : { authorization: `Bearer ${callerKey}` }) },
    body: workload.body ?? null,
    bodyFile: workload.body === undefined ? undefined : writeBodyFile(join(scratch, 'body.json'), workload.body),
    uniqueIds: workload.uniqueIds === true,
  }
  const common = { tool, request, connections: 50, loadCore: LOAD_CORE, targetCore: TARGET_CORE, targetPid: target.proc.pid }
  await measure({ ...common, kind: 'saturate', durationS: 2 })
  const result = await measure({ ...common, kind: 'saturate', durationS: Number(argv.duration) })
  await stop(target.proc, 15_000)
  const file = readdirSync(scratch).find((f) => f.endsWith('.cpuprofile'))
  if (file === undefined) throw new Error('the proxy wrote no .cpuprofile')
  const summary = summariseProfile(JSON.parse(readFileSync(join(scratch, file), 'utf8')), 40)
  const stamp = new Date().toISOString().replace(/[:.]/g, '-')
  const dir = join(ROOT_DIR, 'bench', 'results')
  mkdirSync(dir, { recursive: true })
  copyFileSync(join(scratch, file), join(dir, `profile-${stamp}.cpuprofile`))
  const md = [
    argv.target === 'bare' ? `# CPU profile of bench/bare-proxy.mjs, ${argv.workload}` : `# CPU profile of ${argv.cli === CLI ? CLI_ENTRY : argv.cli}, ${argv.workload}, LOG_LEVEL=${argv['log-level']}`, '',
    `${tool}, 50 connections, ${argv.duration} s at saturation after 2 s of warm-up: ${result.rps} req/s, proxy CPU ${result.targetCpuPct}%, other processes ${result.foreignCpuPctOnTargetCore}% of its core; sampling every ${argv.interval} µs.`, '',
    formatSummary(summary),
  ].join('\n')
  writeFileSync(join(dir, `profile-${stamp}.md`), `${md}\n`)
  process.stdout.write(`${md}\nwritten to bench/results/profile-${stamp}.md and .cpuprofile\n`)
} catch (err) {
  process.stderr.write(`profile failed: ${err.stack ?? err}\n`)
  process.exitCode = 1
} finally {
  await stopAll()
  rmSync(scratch, { recursive: true, force: true })
}
