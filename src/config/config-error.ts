/**
 * What every configuration problem is thrown as: the start, `check`, a reload and a feature's
 * setup print its problems as they are, so none of them quotes a value (values can be secrets).
 */
export class ConfigError extends Error {
  readonly problems: readonly string[]
  constructor (problems: readonly string[]) {
    super(`invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`)
    this.name = 'ConfigError'
    this.problems = problems
  }
}
