import { ConfigError } from '../../src/config/config-error.js'
import { loadConfig, type Env, type LoadOptions } from '../../src/load-config.js'

/** The problems loadConfig reports for `env` (none when it loads); any other error fails the test. */
export function problemsOf (env: Env, options?: LoadOptions): readonly string[] {
  try {
    loadConfig(env, options)
  } catch (err) {
    if (err instanceof ConfigError) return err.problems
    throw err
  }
  return []
}
