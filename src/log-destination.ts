/**
 * Where the sidecar's log lines go: stdout, never blocking the event loop on a slow reader and
 * never holding more than a bound of lines it has not taken.
 *
 * On a pipe (a container's stdout, the usual case) the lines of one turn of the event loop are
 * joined and written with one `write(2)` on this thread, to a description of the pipe of our own
 * opened non-blocking (`/proc/self/fd/N`: the flags of the description stdout shares with the
 * parent are left alone). A full pipe takes part or nothing; the rest waits, bounded, and is tried
 * again shortly. sonic-boom's asynchronous writes go through libuv's thread pool instead, one
 * hand-off and one wake-up of this thread per write: on a saturated proxy that cost 2–6 µs per
 * access line (docs/performance.md, issue 46). Anything else (a file, a terminal, a socket,
 * /dev/null) keeps sonic-boom.
 */
import { once } from 'node:events'
import { closeSync, constants, fstatSync, openSync, writeSync } from 'node:fs'
import pino from 'pino'

/** Past this many bytes waiting for a slow stdout reader, lines are dropped rather than held. */
export const MAX_BUFFERED_LOG_BYTES = 16 * 1024 * 1024
/** How soon a full pipe is tried again. */
const RETRY_MS = 10
/** At exit nothing later will write: a full pipe is waited for this long, then what is left goes. */
const EXIT_WAIT_MS = 1000

export interface LogDestination {
  /** Takes one or more whole lines; false when they were dropped. */
  write: (text: string) => boolean
  /** Writes what is waiting now, waiting up to a second for a full pipe: for exit, when no later turn will come. */
  flushSync: () => void
  /** Writes what is waiting and closes; resolves once the descriptor has taken the last line. */
  end: () => Promise<void>
}

const pause = new Int32Array(new SharedArrayBuffer(4))

/**
 * Lines written to a non-blocking pipe descriptor, those of a turn together. Past `maxLength`
 * bytes waiting (log lines are JSON, nearly all ASCII: their length is their size) a line is
 * dropped and `onDrop` hears its size. So are the lines a write finds no reader for (EPIPE): the
 * sidecar keeps serving, and a reader that opens the FIFO again (a restarted log collector) gets
 * the lines from then on.
 */
export class PipeLines implements LogDestination {
  /** Bytes a full pipe did not take, sent before `#batch`. */
  #unsent: Buffer | null = null
  #batch = ''
  #scheduled = false
  #retry: NodeJS.Timeout | null = null
  #ended = false

  constructor (
    private readonly fd: number,
    private readonly onDrop: (bytes: number) => void,
    private readonly maxLength = MAX_BUFFERED_LOG_BYTES,
  ) {}

  write (text: string): boolean {
    if (this.#ended || (this.#unsent?.length ?? 0) + this.#batch.length + text.length > this.maxLength) {
      this.onDrop(Buffer.byteLength(text))
      return false
    }
    this.#batch += text
    if (!this.#scheduled && this.#retry === null) {
      this.#scheduled = true
      setImmediate(this.#endOfTurn)
    }
    return true
  }

  readonly #endOfTurn = (): void => {
    this.#scheduled = false
    if (this.#writeSome()) return
    this.#retry ??= setTimeout(this.#retried, RETRY_MS).unref()
  }

  readonly #retried = (): void => {
    this.#retry = null
    this.#endOfTurn()
  }

  /** Writes what the pipe takes now; true when nothing is left. */
  #writeSome (): boolean {
    if (this.#batch !== '') {
      const bytes = Buffer.from(this.#batch)
      this.#unsent = this.#unsent === null ? bytes : Buffer.concat([this.#unsent, bytes])
      this.#batch = ''
    }
    while (this.#unsent !== null) {
      let written: number
      try {
        written = writeSync(this.fd, this.#unsent)
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code === 'EAGAIN') return false
        // EPIPE (no reader now) or worse: these bytes cannot be written, later ones may be.
        this.onDrop(this.#unsent.length)
        this.#unsent = null
        break
      }
      this.#unsent = written === this.#unsent.length ? null : this.#unsent.subarray(written)
    }
    return true
  }

  flushSync (): void {
    const deadline = performance.now() + EXIT_WAIT_MS
    while (!this.#writeSome() && performance.now() < deadline) Atomics.wait(pause, 0, 0, 1)
    if (this.#unsent !== null) this.onDrop(this.#unsent.length)
    this.#unsent = null
  }

  end (): Promise<void> {
    if (this.#retry !== null) clearTimeout(this.#retry)
    this.#retry = null
    this.flushSync()
    this.#ended = true
    closeSync(this.fd)
    return Promise.resolve()
  }
}

/** sonic-boom as pino writes by default, but bounded, with the same drop notice. */
function boundedSonicBoom (fd: number, onDrop: (bytes: number) => void, maxLength: number): LogDestination {
  const destination = pino.destination({ dest: fd, sync: false, maxLength })
  destination.on('drop', (data: string) => { onDrop(Buffer.byteLength(data)) })
  return {
    write: (text) => destination.write(text),
    flushSync: () => { destination.flushSync() },
    end: async () => {
      const closed = once(destination, 'close')
      destination.end()
      await closed
    },
  }
}

/**
 * The sidecar's log destination on `fd` (stdout unless told): pino's default holds every line a
 * stalled log reader has not taken, so a blocked pipe would grow the heap until the container is
 * killed; here past `maxLength` characters waiting lines are dropped and `onDrop` hears how many
 * bytes went. Lines still waiting when the process exits are written then.
 */
export function boundedDestination (
  onDrop: (bytes: number) => void,
  fd = 1,
  maxLength = MAX_BUFFERED_LOG_BYTES,
): LogDestination {
  const pipe = fstatSync(fd).isFIFO() ? openNonBlocking(fd) : null
  if (pipe === null) return boundedSonicBoom(fd, onDrop, maxLength)
  const destination = new PipeLines(pipe, onDrop, maxLength)
  process.once('exit', () => { destination.flushSync() })
  return destination
}

/** A description of the pipe on `fd` of our own, non-blocking; null where /proc cannot give one. */
function openNonBlocking (fd: number): number | null {
  try {
    return openSync(`/proc/self/fd/${fd}`, constants.O_WRONLY | constants.O_NONBLOCK)
  } catch {
    return null
  }
}
