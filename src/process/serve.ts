/**
 * `serve`: the proxy and the features' listeners beside it (features/index.ts, each loaded only
 * when on), started in an order that cannot leave a half-started proxy: every port is checked
 * first, the proxy listens before the listeners beside it, and a listener that cannot listen
 * closes everything before the process exits with its sentence.
 */
import type { SharedParts } from '../feature/feature.js'
import { FEATURES } from '../features/index.js'
import { describeListenError, listenProblem } from '../http/listen-check.js'
import { boundedDestination } from '../log-destination.js'
import { createLogger } from '../logger.js'
import { watchSecretFiles } from '../ops/credential-rotation.js'
import { announceWhenReady } from '../ops/ready-announcer.js'
import { startSummary } from '../ops/start-summary.js'
import { createStorage } from '../storage/storage.js'
import { exitOnConfigError, exitWith, loadOrExit } from './exit.js'
import { credentialReloads } from './reload.js'
import { drainOnSignal } from './shutdown.js'

const DROP_NOTICE_INTERVAL_MS = 60_000
let lastDropNoticeMs = -Infinity

/** On stderr, which a log pipeline that stopped reading stdout may still show; once a minute. */
function noticeDroppedLines (bytes: number): void {
  const now = Date.now()
  if (now - lastDropNoticeMs < DROP_NOTICE_INTERVAL_MS) return
  lastDropNoticeMs = now
  process.stderr.write(`payments-auth-proxy: stdout is not being read; dropping log lines (${bytes} bytes just now)\n`)
}

export async function serve (): Promise<void> {
  const started = loadOrExit()
  const { config, warnings } = started
  const destination = boundedDestination(noticeDroppedLines)
  const log = createLogger(config.logLevel, destination)
  for (const warning of warnings) log.warn({ warning }, 'configuration warning')
  const { host, port } = config.listen
  // Loading the server's modules starts nothing, so it runs meanwhile. Each command imports its own
  // code: `check` never loads the server, serving never loads check.
  const server = import('../server.js')
  server.catch(() => {})
  // The main thread's one Redis connection (storage/storage.ts), for the proxy's stores and the listeners' beside it.
  const storage = createStorage(config.state, 'sidecar')
  const shared: Partial<SharedParts> = {}
  const besides = (await Promise.all(
    FEATURES.map(async (feature) => await feature.sidecar?.({ config, log, lines: destination, storage, shared })),
  )).filter((part) => part !== undefined && part !== null)
  // Before anything starts: a taken port must not surface as a half-started proxy's side effects.
  const taken = await Promise.all([
    listenProblem(host, port),
    ...besides.map(async ({ address }) => await listenProblem(address.host, address.port, address.settings)),
  ])
  for (const problem of taken) if (problem !== null) exitWith(problem)
  const { buildServer } = await server
  const readiness = besides.flatMap((part) => part.readiness === undefined ? [] : [part.readiness])
  const activity = besides.find((part) => part.activity !== undefined)?.activity
  const proxy = await buildServer(config, { logger: log, readiness, activity, storage }).catch(exitOnConfigError)
  const { app, sources, rotation, callers, restart, metrics } = proxy
  Object.assign(shared, proxy.shared)
  for (const part of besides) await part.start({ registry: metrics.registry, sources, egress: proxy.egress })
  for (const feature of FEATURES) await feature.join?.(shared)
  const features = startSummary(config, callers?.current() ?? null, shared.approvals !== undefined)
  log.info(features.fields, features.msg)

  const reload = credentialReloads({ started, rotation, restart, log })
  process.on('SIGHUP', () => { reload('SIGHUP') })
  process.on('SIGHUP', () => { callers?.reload('SIGHUP') })
  process.on('SIGHUP', () => { proxy.reloadFeatures('SIGHUP') })
  const stopWatchingCallers = callers?.watch()
  const stopWatchingFeatures = proxy.watchFeatures()
  let stopAnnouncing = (): void => {}
  const stopWatching = watchSecretFiles(config.secretFiles, () => { reload('secret file changed') })
  const closeAll = async (): Promise<void> => {
    await Promise.all([app.close(), ...besides.map(async (part) => { await part.close() })])
    await storage.close()
  }
  drainOnSignal({
    graceS: config.shutdownGraceS,
    log,
    stop: () => { stopWatching(); stopWatchingCallers?.(); stopWatchingFeatures(); stopAnnouncing() },
    cut: () => { app.server.closeAllConnections(); for (const part of besides) part.closeAllConnections() },
    closeAll,
  })

  await app.listen({ host, port }).catch(async (err: unknown) => {
    const sentence = describeListenError(err, host, port)
    if (sentence === null) throw err
    await app.close()
    exitWith(sentence)
  })
  const fields = { environments: [...sources.keys()], defaultEnvironment: config.defaultEnvironment }
  log.info(fields, 'payments-auth-proxy listening; ready once every environment holds a token')
  stopAnnouncing = announceWhenReady(sources, log, fields)
  for (const part of besides) {
    await part.listen().catch(async (err: unknown) => {
      const { host: partHost, port: partPort, settings } = part.address
      const sentence = describeListenError(err, partHost, partPort, settings)
      if (sentence === null) throw err
      await closeAll()
      exitWith(sentence)
    })
  }
}
