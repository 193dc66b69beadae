// Example application for the compose file: it shares the sidecar's network namespace
// (network_mode: "service:payments-auth-proxy"), so the proxy is simply http://localhost:8080 and
// the application holds no API key and no token. Replace it with your own service.
//
//   node app.mjs                 wait for the sidecar to be ready, call EXAMPLE_REQUEST_PATH once, idle
//   node app.mjs call <path>     one request through the sidecar; prints status and body, exit 0 on 2xx
//   node app.mjs wait-ready      poll /readyz until 200 (EXAMPLE_READY_TIMEOUT_SECONDS), exit 0 or 1
const SIDECAR = process.env.SIDECAR_URL || 'http://localhost:8080'
const REQUEST_PATH = process.env.EXAMPLE_REQUEST_PATH || '/fiat/v1/ping'
const READY_TIMEOUT_MS = Number(process.env.EXAMPLE_READY_TIMEOUT_SECONDS || 60) * 1000

async function call (path, init = {}) {
  const res = await fetch(new URL(path, SIDECAR), { ...init, signal: AbortSignal.timeout(10_000) })
  const body = await res.text()
  // x-proxy-error tells the sidecar's own errors apart from the provider's answers.
  const proxyError = res.headers.get('x-proxy-error')
  return { status: res.status, body, proxyError }
}

async function waitReady () {
  const deadline = Date.now() + READY_TIMEOUT_MS
  for (;;) {
    try {
      const { status, body } = await call('/readyz')
      if (status === 200) return true
      if (Date.now() > deadline) { log({ msg: 'sidecar not ready', status, body: safeJson(body) }); return false }
    } catch (err) {
      if (Date.now() > deadline) { log({ msg: 'sidecar unreachable', err: String(err.cause ?? err) }); return false }
    }
    await new Promise((resolve) => setTimeout(resolve, 1000))
  }
}

// The demo's fake provider echoes the request headers it received, the proxy's Authorization
// included; an application's log is no place for a token, whoever sent it back.
const SENSITIVE = /^(authorization|proxy-authorization|api-key|x-api-key|token|cookie|set-cookie)$/i
function redact (value) {
  if (Array.isArray(value)) return value.map(redact)
  if (value === null || typeof value !== 'object') return value
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, SENSITIVE.test(k) ? '[redacted]' : redact(v)]))
}
function safeJson (text) { try { return redact(JSON.parse(text)) } catch { return text.slice(0, 500) } }
function log (obj) { process.stdout.write(JSON.stringify({ time: new Date().toISOString(), ...obj }) + '\n') }

const [mode = 'run', arg] = process.argv.slice(2)
if (mode === 'call') {
  const { status, body, proxyError } = await call(arg ?? REQUEST_PATH)
  process.stdout.write(`${status}${proxyError ? ` (proxy error ${proxyError})` : ''}\n${JSON.stringify(safeJson(body))}\n`)
  process.exitCode = status >= 200 && status < 300 ? 0 : 1
} else if (mode === 'wait-ready') {
  process.exitCode = (await waitReady()) ? 0 : 1
} else {
  log({ msg: 'example app starting', sidecar: SIDECAR })
  if (await waitReady()) {
    const { status, body, proxyError } = await call(REQUEST_PATH)
    log({ msg: 'called the provider through the sidecar', path: REQUEST_PATH, status, proxyError, body: safeJson(body) })
  }
  // A real service would keep serving; this one idles until stopped.
  const timer = setInterval(() => {}, 1 << 30)
  const stop = () => { clearInterval(timer); log({ msg: 'example app stopping' }) }
  process.once('SIGTERM', stop)
  process.once('SIGINT', stop)
}
