/**
 * pino options: JSON lines in production, redaction of every field that could hold a secret.
 * Secrets are also kept out by construction (headers are never logged whole, token values are
 * never put in log objects); redaction is the second line of defence, and a test scans a whole
 * trace-level run for the secrets it used.
 */
import pino, { type DestinationStream, type Logger, type LoggerOptions } from 'pino'

const SECRET_FIELDS = ['authorization', 'api-key', 'apiKey', 'publicKey', 'token', 'cookie', 'x-api-key', 'proxy-authorization', 'set-cookie']

export const REDACT_PATHS = [
  ...SECRET_FIELDS.flatMap((f) => [`"${f}"`, `*["${f}"]`, `*.*["${f}"]`]),
  'req.headers', 'res.headers',
]

export function loggerOptions (level: string): LoggerOptions {
  return {
    level,
    redact: { paths: REDACT_PATHS, censor: '[redacted]' },
    base: { service: 'payments-auth-proxy' },
    timestamp: pino.stdTimeFunctions.isoTime,
  }
}

export function createLogger (level: string, destination?: DestinationStream): Logger {
  return destination === undefined ? pino(loggerOptions(level)) : pino(loggerOptions(level), destination)
}
