/**
 * A failure whose message is a whole sentence for the operator (what failed, which variable, what to
 * do), such as a store that cannot be opened. The CLI prints it as one line and exits 1, in every
 * command, instead of the bounded report of an unexpected error (fatal-error.ts).
 */
export class OperatorError extends Error {
  override name = 'OperatorError'
}
