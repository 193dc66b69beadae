/**
 * pino options: JSON lines, and no secret in any of them. Secrets are kept out by construction
 * (headers are never logged whole, token values never put in log objects); redaction is the second
 * line of defence, and a test scans a whole trace-level run for every secret it used.
 *
 * Redaction is split for speed: pino's path redaction handles the top-level fields (it looks them
 * up only when present), and a copy-on-write scrub covers the same names two levels down. Wildcard
 * paths (`*.token`) would make pino run every value of every line through the redactor: ten times
 * the cost of a log line, paid on every proxied request.
 */
import pino, { type DestinationStream, type Logger, type LoggerOptions } from 'pino'

export const SECRET_FIELDS = ['authorization', 'api-key', 'apiKey', 'publicKey', 'token', 'cookie', 'x-api-key', 'proxy-authorization', 'set-cookie']
export const CENSOR = '[redacted]'

const SECRET: ReadonlySet<string> = new Set(SECRET_FIELDS)
const SCRUB_DEPTH = 2

/** A copy of `obj` with secret-named fields censored down to SCRUB_DEPTH; `obj` itself if none. */
export function scrubSecrets<T extends object> (obj: T, depth = 0): T {
  let out = obj as Record<string, unknown>
  for (const key in obj) {
    const value = (obj as Record<string, unknown>)[key]
    let replaced = value
    if (SECRET.has(key)) replaced = CENSOR
    // Errors are left whole for the `err` serializer, which scrubs what it makes of them.
    else if (depth < SCRUB_DEPTH && value !== null && typeof value === 'object' && !(value instanceof Error) && !Buffer.isBuffer(value)) replaced = scrubSecrets(value, depth + 1)
    if (replaced !== value) {
      // Arrays stay arrays: pino serialises the copy in place of the original.
      if (out === obj) out = (Array.isArray(obj) ? [...obj] : { ...obj }) as Record<string, unknown>
      out[key] = replaced
    }
  }
  return out as T
}

export function loggerOptions (level: string): LoggerOptions {
  return {
    level,
    redact: { paths: [...SECRET_FIELDS.map((f) => `"${f}"`), 'req.headers', 'res.headers'], censor: CENSOR },
    formatters: { log: (obj) => scrubSecrets(obj) },
    serializers: { err: (err: Error) => scrubSecrets(pino.stdSerializers.err(err), 1) },
    base: { service: 'payments-auth-proxy' },
    timestamp: isoTime,
  }
}

let stampedSecond = Number.NaN
let secondPrefix = ''

/**
 * pino's isoTime (`,"time":"2026-11-23T13:29:51.042Z"`). Every line of a second shares all but the
 * milliseconds, so `toISOString()` runs once per second instead of once per line.
 */
function isoTime (): string {
  return isoTimeAt(Date.now())
}

/** The same text as `,"time":"${new Date(ms).toISOString()}"`, for any ms since 1970. */
export function isoTimeAt (ms: number): string {
  const second = Math.floor(ms / 1000)
  if (second !== stampedSecond) {
    stampedSecond = second
    // "2026-11-23T13:29:51." without the milliseconds and the "Z".
    secondPrefix = `,"time":"${new Date(second * 1000).toISOString().slice(0, -4)}`
  }
  const millis = ms - second * 1000
  return `${secondPrefix}${millis < 10 ? '00' : millis < 100 ? '0' : ''}${millis}Z"`
}

export function createLogger (level: string, destination?: DestinationStream): Logger {
  return destination === undefined ? pino(loggerOptions(level)) : pino(loggerOptions(level), destination)
}
