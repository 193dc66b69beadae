/** A promise and the function that settles it: a gate a test opens, or an event it waits for. (Promise.withResolvers is Node 22+.) */
export function deferred (): { promise: Promise<void>, resolve: () => void } {
  let resolve: () => void = () => {}
  const promise = new Promise<void>((settle) => { resolve = settle })
  return { promise, resolve }
}
