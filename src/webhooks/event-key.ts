/**
 * An event's duplicate key and order key (SPEC §10). The key is the provider's event id, from the
 * header `PROXY_WEBHOOK_EVENT_ID_HEADER` (it wins) or the JSON Pointer `PROXY_WEBHOOK_EVENT_ID_POINTER`,
 * a non-empty string or an integer; else the body's SHA-256. A repeated member on the way is
 * ambiguous (two readers could see two ids), so it falls back to the hash as well.
 */
import { createHash } from 'node:crypto'
import { parseStrictJsonBytes, readPointer, type JsonValue } from '../json/strict-json.js'

export interface EventKeys {
  /** `id:<event id>` or `sha256:<hex>`. */
  key: string
  bodySha256: string
  /** Events sharing it are delivered one at a time, in the order received; null: no order. */
  orderKey: string | null
}

export interface EventKeySettings {
  eventIdPointer: string | null
  eventIdHeader: string | null
  orderKeyPointer: string | null
}

/** Pure. `header` is the value of the event id header, if configured and present. */
export function eventKeys (body: Buffer, header: string | string[] | undefined, settings: EventKeySettings): EventKeys {
  const bodySha256 = createHash('sha256').update(body).digest('hex')
  let json: JsonValue | undefined
  const read = (pointer: string | null): string | null => {
    if (pointer === null) return null
    // Stryker disable next-line ConditionalExpression: parsing again reads the same value; the test only saves a second
    // parse
    if (json === undefined) {
      const parsed = parseStrictJsonBytes(body)
      json = parsed.ok ? parsed.value : null
    }
    // Stryker disable next-line ConditionalExpression: readPointer(null, pointer) is missing, or null for '', and
    // idText(null) is null
    if (json === null) return null
    const found = readPointer(json, pointer)
    return found.kind === 'found' ? idText(found.value) : null
  }
  const fromHeader = settings.eventIdHeader !== null && typeof header === 'string' && header !== '' ? header : null
  const id = fromHeader ?? read(settings.eventIdPointer)
  return { key: id === null ? `sha256:${bodySha256}` : `id:${id}`, bodySha256, orderKey: read(settings.orderKeyPointer) }
}

function idText (value: JsonValue): string | null {
  if (typeof value === 'string') return value === '' ? null : value
  // Stryker disable next-line ConditionalExpression: Number.isSafeInteger is false for anything but a number
  if (typeof value === 'number' && Number.isSafeInteger(value)) return String(value)
  return null
}
