/**
 * How an IdempotencyRecord travels through Redis: JSON with the body as base64, so any bytes the
 * provider sent survive a string value. A value that does not decode is reported as null, never thrown.
 */
import type { IdempotencyRecord } from './state-store.js'

export function encodeRecord (record: IdempotencyRecord): string {
  return JSON.stringify({ f: record.fingerprint, s: record.status, h: record.headers, b: record.body.toString('base64') })
}

export function decodeRecord (text: string): IdempotencyRecord | null {
  let parsed: unknown
  try {
    parsed = JSON.parse(text)
  } catch {
    return null
  }
  if (typeof parsed !== 'object' || parsed === null) return null
  const { f, s, h, b } = parsed as Record<string, unknown>
  if (typeof f !== 'string' || typeof s !== 'number' || typeof b !== 'string' || !isHeaders(h)) return null
  return { fingerprint: f, status: s, headers: h, body: Buffer.from(b, 'base64') }
}

function isHeaders (value: unknown): value is Record<string, string | string[]> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false
  return Object.values(value).every((v) => typeof v === 'string' || (Array.isArray(v) && v.every((x) => typeof x === 'string')))
}
