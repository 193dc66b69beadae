/**
 * The suite's one way to wait for something another process or socket does: check `condition`
 * every `everyMs` until it holds, and reject naming `what` (and `detail()`, e.g. a child's output)
 * after `timeoutMs`, so a test fails with a reason instead of hanging or passing by luck.
 */
export interface EventuallyOptions {
  what?: string
  timeoutMs?: number
  everyMs?: number
  detail?: () => string
}

export async function eventually (condition: () => boolean | Promise<boolean>, options: EventuallyOptions = {}): Promise<void> {
  const { what = 'a condition', timeoutMs = 5_000, everyMs = 10, detail } = options
  const deadline = performance.now() + timeoutMs
  while (!await condition()) {
    if (performance.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${detail === undefined ? '' : `\n${detail()}`}`)
    await new Promise((resolve) => setTimeout(resolve, everyMs))
  }
}
