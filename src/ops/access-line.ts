/**
 * The access line of a proxied request (request-audit.ts), one per request. Its fields are
 * serialised here, in their fixed order, and joined with pino's own pieces of a line: the level,
 * the time from the logger's timestamp function, its bindings, the message key and the line's end,
 * then handed to the logger's destination. pino's generic serialisation of the same object (every
 * key escaped again, every value's type asked) was most of the line's CPU (docs/performance.md,
 * issue 46). A test holds the two writers byte for byte equal.
 *
 * The logger given must be one whose lines need nothing more than those pieces: no redaction and
 * no log formatter (the access child of request-audit.ts has neither; its fields hold no secret).
 * A mixin, a stream-write hook, a message prefix, a nested key or a destination that asks for each
 * line's metadata (pino's multistream) would each change a line, so with any of them the line is
 * written by `logger.info`.
 */
import pino, { type Logger } from 'pino'

export interface AccessLine {
  reqId: string
  environment: string | null
  interface: string
  method: string
  path: string
  status: number
  retried: boolean
  durationMs: number
  caller: string
  /** SPEC §13: set, with `tool`, for a request made by a tool call. */
  via?: string
  tool?: string
  /** SPEC §15: `oauth`, with the client's id, for a tool call of an agent signed in with OAuth. */
  auth?: string
  clientId?: string | null
}

/** What a feature adds to the access line of a request it made (SPEC §13, §15). */
export type ViaFields = Pick<AccessLine, 'via' | 'tool' | 'auth' | 'clientId'> & { via: string, tool: string }

export const ACCESS_MESSAGE = 'proxied request'
const INFO = 30
// In pino.symbols, not in its types.
const MESSAGE_PREFIX = (pino.symbols as unknown as Record<string, symbol>)['msgPrefixSym'] as symbol

/** pino's pieces of an info line, read once. */
interface LinePieces {
  stream: { write (line: string): unknown }
  prefix: string
  time: () => string
  bindings: string
  suffix: string
}

/** The pieces, or null when this logger would change a line beyond them (see above). */
function linePiecesOf (logger: Logger): LinePieces | null {
  const s = pino.symbols
  const view = logger as unknown as Record<symbol, unknown>
  const stream = view[s.streamSym] as LinePieces['stream'] & Record<symbol, unknown>
  const hooks = view[s.hooksSym] as { streamWrite?: unknown } | undefined
  const prefix = (view[s.lsCacheSym] as Record<number, unknown>)[INFO]
  const changes = view[s.mixinSym] != null || hooks?.streamWrite != null || (view[MESSAGE_PREFIX] ?? '') !== '' ||
    view[s.nestedKeySym] != null || stream[s.needsMetadataGsym] === true
  if (changes || typeof prefix !== 'string') return null
  return {
    stream,
    prefix,
    time: view[s.timeSym] as () => string,
    bindings: view[s.chindingsSym] as string,
    suffix: `,${JSON.stringify(view[s.messageKeySym])}:${JSON.stringify(ACCESS_MESSAGE)}${view[s.endSym] as string}`,
  }
}

/** Writes access lines through `logger` (see above for which loggers). */
export function accessLineWriter (logger: Logger): (line: AccessLine) => void {
  const pieces = linePiecesOf(logger)
  if (pieces === null) return (line) => { logger.info(line, ACCESS_MESSAGE) }
  const { stream, prefix, time, bindings, suffix } = pieces
  return (line) => {
    // Read on every line, as pino does: a logger's level may be set after it is made.
    if (logger.levelVal > INFO) return
    stream.write(`${prefix}${time()}${bindings}${fieldsOf(line)}${suffix}`)
  }
}

/**
 * The fields as pino writes them: a number that is not finite as null, strings as JSON.stringify
 * does. pino does too from Node 25; before, it leaves a lone surrogate unescaped, which the line's
 * UTF-8 then turns into U+FFFD, where this writes it escaped.
 */
function fieldsOf (line: AccessLine): string {
  let text = `,"reqId":${JSON.stringify(line.reqId)},"environment":${JSON.stringify(line.environment)},"interface":${JSON.stringify(line.interface)},"method":${JSON.stringify(line.method)},"path":${JSON.stringify(line.path)},"status":${numberOf(line.status)},"retried":${line.retried},"durationMs":${numberOf(line.durationMs)},"caller":${JSON.stringify(line.caller)}`
  if (line.via !== undefined) text += `,"via":${JSON.stringify(line.via)}`
  if (line.tool !== undefined) text += `,"tool":${JSON.stringify(line.tool)}`
  if (line.auth !== undefined) text += `,"auth":${JSON.stringify(line.auth)},"clientId":${JSON.stringify(line.clientId ?? null)}`
  return text
}

function numberOf (value: number): string {
  return Number.isFinite(value) ? String(value) : 'null'
}
