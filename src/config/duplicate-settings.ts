/**
 * `PROXY_DUPLICATE_*` (SPEC §16) -> the probable-duplicate check's settings, or null when it is off:
 * payments not followed (the check reads their records), or a window of 0. Set while payments are
 * off, the variables are named in a warning, as payments' own are.
 */
import { JSON_POINTER_PATTERN } from '../json/strict-json.js'
import { splitList } from './network-lists.js'
import type { RawSettings } from './schema.js'

const JSON_POINTER = new RegExp(JSON_POINTER_PATTERN)

export interface DuplicatesConfig {
  windowMs: number
  /** The recipient is the first of these whose value is a non-empty string or a number. */
  recipientPointers: readonly string[]
}

export function resolveDuplicates (
  settings: RawSettings,
  variables: Readonly<Record<string, string | undefined>>,
  problems: string[],
  warnings: string[],
): DuplicatesConfig | null {
  const recipientPointers = splitList(settings.PROXY_DUPLICATE_RECIPIENT_POINTERS)
  for (const pointer of recipientPointers) {
    if (!JSON_POINTER.test(pointer)) problems.push(`PROXY_DUPLICATE_RECIPIENT_POINTERS: "${pointer}" must be a JSON Pointer (RFC 6901) to a member, such as /payoutMethod/accountNumber`)
  }
  if (recipientPointers.length === 0) problems.push('PROXY_DUPLICATE_RECIPIENT_POINTERS must list at least one JSON Pointer, such as /payoutMethod/accountNumber')
  if (settings.PROXY_PAYMENTS !== 'on') {
    const given = Object.keys(variables).filter((name) => name.startsWith('PROXY_DUPLICATE_') && variables[name] !== '')
    if (given.length > 0) warnings.push(`${given.join(', ')} set but PROXY_PAYMENTS is not on: probable duplicates are judged only among followed payments`)
    return null
  }
  if (settings.PROXY_DUPLICATE_WINDOW_SECONDS === 0) return null
  return { windowMs: settings.PROXY_DUPLICATE_WINDOW_SECONDS * 1000, recipientPointers }
}
