/**
 * An ioredis client whose command deadline is judged after the replies that already arrived are read,
 * in place of ioredis' `commandTimeout`. That one rejects a command from its timer, and a turn of
 * Node's loop runs its timers before it reads its sockets: a loop held past the deadline (a burst
 * being parsed, a CPU shared under a load of 20) failed commands whose replies were waiting in the
 * socket, and an event Redis had stored was answered 503. The SQLite thread's deadline had the
 * same race (sqlite/sqlite-thread.ts).
 *
 * A command still unanswered is rejected one turn after its deadline, as ioredis would have it
 * (`Command timed out`), and stays in ioredis' queue: its late reply, when Redis answers at all, is
 * matched to it, not to the next command.
 */
import { Redis, type Command, type RedisOptions } from 'ioredis'

export class RedisWithDeadline extends Redis {
  readonly #deadlineMs: number
  // A command can pass through sendCommand again (a resend after a reconnect): its deadline is
  // counted from its first sending, as ioredis counts its own.
  readonly #timed = new WeakSet<Command>()

  constructor (url: string, deadlineMs: number, options: Omit<RedisOptions, 'commandTimeout' | 'replyMapping'>) {
    super(url, options)
    this.#deadlineMs = deadlineMs
  }

  override sendCommand (...args: Parameters<Redis['sendCommand']>): unknown {
    const [command] = args
    if (!this.#timed.has(command)) {
      this.#timed.add(command)
      const timer = setTimeout(() => {
        // Between this turn's timers and its immediates, the loop reads its sockets.
        setImmediate(() => { if (!command.isSettled) command.reject(new Error('Command timed out')) })
      }, this.#deadlineMs)
      // Cleared once answered: a pending timer would hold the command, and an event's body, for the
      // whole deadline.
      const clear = (): void => { clearTimeout(timer) }
      command.promise.then(clear, clear)
    }
    return super.sendCommand(...args)
  }
}
