/**
 * Runs the CLI as `npm start` and the Docker image run it (`dist-bundle/cli.mjs`, the esbuild bundle
 * of `dist/cli.js` that `npm run build` makes) as a child process with a given environment,
 * collecting its stdout/stderr; killed at teardown.
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { once } from 'node:events'
import { fileURLToPath } from 'node:url'
import type { Test } from 'tap'
import { eventually, HANG_MS } from './eventually.js'

export const CLI = fileURLToPath(new URL('../../dist-bundle/cli.mjs', import.meta.url))

export interface Child {
  process: ChildProcess
  stdout: () => string
  stderr: () => string
  exited: Promise<{ code: number | null, signal: NodeJS.Signals | null }>
  waitFor: (pattern: RegExp, timeoutMs?: number) => Promise<void>
}

export function runCli (t: Test, args: string[], env: Record<string, string | undefined>, cwd?: string): Child {
  return run(t, process.execPath, [CLI, ...args], env, cwd)
}

/** `npm start` itself, in the project's directory: what the README tells users to run. */
export function runNpmStart (t: Test, env: Record<string, string | undefined>): Child {
  return run(t, 'npm', ['start', '--silent'], { HOME: process.env['HOME'], ...env }, fileURLToPath(new URL('../../', import.meta.url)))
}

/** Any command, collected and killed at teardown like the CLI (e.g. the CLI under `unshare`). */
export function run (t: Test, command: string, args: string[], env: Record<string, string | undefined>, cwd?: string): Child {
  const child = spawn(command, args, {
    env: { PATH: process.env['PATH'], ...env },
    cwd,
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let out = ''
  let err = ''
  child.stdout.on('data', (c: Buffer) => { out += c.toString('utf8') })
  child.stderr.on('data', (c: Buffer) => { err += c.toString('utf8') })
  const exited = once(child, 'exit').then(([code, signal]) => ({ code: code as number | null, signal: signal as NodeJS.Signals | null }))
  t.teardown(() => { if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL') })
  return {
    process: child,
    stdout: () => out,
    stderr: () => err,
    exited,
    // A process that exits fails the wait at once: the bound is only for one that hangs.
    async waitFor (pattern, timeoutMs = HANG_MS) {
      await eventually(() => {
        if (child.exitCode !== null && !pattern.test(out + err)) throw new Error(`process exited (${child.exitCode}) before ${String(pattern)}; output:\n${out}${err}`)
        return pattern.test(out + err)
      }, { what: String(pattern), timeoutMs, everyMs: 20, detail: () => `output:\n${out}${err}` })
    },
  }
}

/** The port the CLI logged it listens on. */
export function listeningPort (child: Child): number {
  const match = /Server listening at http:\/\/127\.0\.0\.1:(\d+)/.exec(child.stdout())
  if (match === null) throw new Error('no listening line')
  return Number(match[1])
}
