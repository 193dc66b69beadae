/**
 * What the CLI prints for an error nobody expected, instead of Node's default report: that one
 * quotes the source line of the throw, and a line of the whitespace-minified bundle is the whole
 * bundle (hundreds of KB on a terminal). Here: the error's name and code, its message cut short
 * with any URL credentials masked (a Redis URL may hold a password), and a few stack frames.
 */

export const FATAL_MESSAGE_MAX_CHARS = 200
export const FATAL_STACK_FRAMES = 10
const FRAME_MAX_CHARS = 200

export function describeFatal (err: unknown): string {
  const error = err instanceof Error ? err : new Error(typeof err === 'string' ? err : 'a non-Error value was thrown')
  const code = (error as { code?: unknown }).code
  const head = `${error.name}${typeof code === 'string' ? ` ${code}` : ''}: ${bounded(maskCredentials(error.message), FATAL_MESSAGE_MAX_CHARS)}`
  const frames = (error.stack ?? '').split('\n').filter((line) => /^\s+at /.test(line)).slice(0, FATAL_STACK_FRAMES)
  return [head, ...frames.map((frame) => bounded(frame, FRAME_MAX_CHARS))].join('\n')
}

function maskCredentials (text: string): string {
  return text.replace(/\/\/[^\s/@]*@/g, '//***@')
}

function bounded (text: string, max: number): string {
  const line = text.replace(/\s*\n\s*/g, ' ')
  return line.length <= max ? line : `${line.slice(0, max)}… (${line.length - max} more characters)`
}
