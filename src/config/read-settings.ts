/**
 * The variables and `.env` through the schema (settings-reader.ts), with unknown names reported.
 * `.env` is merged here so that its values get the same treatment as the variables (empty means
 * unset). An invalid variable is reported, then dropped so its default applies and every other
 * problem is reported too.
 */
import { readFileSync } from 'node:fs'
import { parseEnv } from 'node:util'
import { KNOWN_VARIABLES, SECRET_VARIABLES, type RawSettings } from './schema.js'
import { readSettingsVariables } from './settings-reader.js'
import { describeUnknown, findUnknownVariables } from './unknown-variables.js'

export type Env = Readonly<Record<string, string | undefined>>

export interface ReadSettings { variables: Env, settings: RawSettings, invalid: ReadonlySet<string> }

/** `dotenvPath`: a dotenv file read under the variables (variables win); undefined means none. */
export function readSettings (
  env: Env,
  dotenvPath: string | undefined,
  problems: string[],
  warnings: string[],
): ReadSettings {
  const fromFile = dotenvPath === undefined ? {} : readDotenv(dotenvPath, problems)
  // A variable set in the environment wins over `.env` even when empty, and empty means unset: an
  // operator's `PROXY_CALLERS_FILE=` turns the file's callers off.
  const variables: Env = { ...fromFile, ...env }
  const data = knownValues(variables)
  const invalid = new Set<string>()
  let settings: RawSettings
  try {
    settings = readSettingsVariables<RawSettings>(data)
  } catch (err) {
    const found = validationProblems(err)
    problems.push(...found.map((f) => f.problem))
    for (const f of found) invalid.add(f.variable)
    settings = readSettingsVariables<RawSettings>(
      Object.fromEntries(Object.entries(data).filter(([k]) => !invalid.has(k))),
    )
  }
  reportUnknownVariables(variables, settings, problems, warnings)
  return { variables, settings, invalid }
}

/** The schema's names, and the `_FILE` form of every secret, whether or not the schema lists it. */
const KNOWN_NAMES: ReadonlySet<string> = new Set([...KNOWN_VARIABLES, ...SECRET_VARIABLES.map((name) => `${name}_FILE`)])

/** Unknown PAYMENTS_ and PROXY_ names stop the start, unless PROXY_ALLOW_UNKNOWN_VARIABLES=true makes them warnings. */
function reportUnknownVariables (variables: Env, settings: RawSettings, problems: string[], warnings: string[]): void {
  const allowed = settings.PROXY_ALLOW_UNKNOWN_VARIABLES === 'true'
  for (const unknown of findUnknownVariables(Object.keys(variables), KNOWN_NAMES)) {
    if (allowed) warnings.push(`${describeUnknown(unknown)} (ignored: PROXY_ALLOW_UNKNOWN_VARIABLES=true)`)
    else problems.push(`${describeUnknown(unknown)} (a misspelt setting would be ignored; set PROXY_ALLOW_UNKNOWN_VARIABLES=true to start anyway)`)
  }
}

function knownValues (env: Env): Record<string, string> {
  return Object.fromEntries(Object.entries(env).filter((e): e is [string, string] => KNOWN_VARIABLES.has(e[0]) && e[1] !== undefined && e[1] !== ''))
}

function readDotenv (path: string, problems: string[]): Env {
  let text: string
  try {
    text = readFileSync(path, 'utf8')
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code
    // The CLI passes the path only when the file exists; one deleted in between is simply absent.
    if (code !== 'ENOENT') problems.push(`${path}: cannot read (${code ?? 'error'})`)
    return {}
  }
  return parseEnv(text)
}

interface AjvError { instancePath?: string, message?: string, params?: Record<string, unknown> }

/** The validator's errors, one line per variable and rule; a value is never quoted. */
function validationProblems (err: unknown): Array<{ variable: string, problem: string }> {
  const errors = (err as { errors?: AjvError[] }).errors
  if (!Array.isArray(errors)) throw err
  const seen = new Set<string>()
  const out: Array<{ variable: string, problem: string }> = []
  for (const e of errors) {
    const variable = (e.instancePath ?? '').replace(/^\//, '')
    const allowed = e.params?.['allowedValues']
    const problem = `${variable} ${Array.isArray(allowed) ? `must be one of ${allowed.join(', ')}` : e.message ?? 'is invalid'}`
    if (seen.has(problem)) continue
    seen.add(problem)
    out.push({ variable, problem })
  }
  return out
}
