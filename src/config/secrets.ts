/**
 * Reads the four credentials, each from its variable or from the file named by `<NAME>_FILE`
 * (Docker and Kubernetes secrets). Problems name the variable and the file, never the value.
 */
import { readFileSync } from 'node:fs'
import { SECRET_VARIABLES, type SecretVariable } from './schema.js'

export type SecretValues = Partial<Record<SecretVariable, string>>

export interface SecretsResult {
  values: SecretValues
  /** `<NAME>_FILE` paths in use, watched for rotation. */
  files: string[]
  problems: string[]
  /** Variables that were set but refused (each has its line in `problems`). */
  refused: ReadonlySet<SecretVariable>
}

// Header values cannot carry control characters; a key with a stray space is a copy-paste accident.
const SAFE_SECRET = /^[\x21-\x7e]+$/

export function readSecrets (env: Readonly<Record<string, unknown>>): SecretsResult {
  const values: SecretValues = {}
  const files: string[] = []
  const problems: string[] = []
  const refused = new Set<SecretVariable>()
  const refuse = (name: SecretVariable, problem: string): void => {
    refused.add(name)
    problems.push(problem)
  }
  for (const name of SECRET_VARIABLES) {
    const read = readSecretVariable(env, name)
    if (read.file !== undefined) files.push(read.file)
    if (read.problem !== undefined) refuse(name, read.problem)
    else if (read.value !== undefined) values[name] = read.value
  }
  return { values, files, problems, refused }
}

export interface SecretRead {
  value?: string
  /** The `<NAME>_FILE` path, when the value came (or was to come) from one. */
  file?: string
  /** Names the variable and the file, never the value. */
  problem?: string
}

/** One secret from `name` or the file named by `<name>_FILE`; also used by the webhook inbox's secrets. */
export function readSecretVariable (env: Readonly<Record<string, unknown>>, name: string): SecretRead {
  const direct = nonEmpty(env[name])
  const file = nonEmpty(env[`${name}_FILE`])
  if (direct !== undefined && file !== undefined) return { problem: `${name} and ${name}_FILE are both set: use one` }
  let value = direct
  if (file !== undefined) {
    try {
      // Secret files conventionally end with a newline (echo, kubectl create secret --from-file).
      value = readFileSync(file, 'utf8').replace(/\r?\n$/, '')
    } catch (err) {
      return { file, problem: `${name}_FILE: cannot read ${file} (${(err as NodeJS.ErrnoException).code ?? 'error'})` }
    }
    if (value === '') return { file, problem: `${name}_FILE: ${file} is empty` }
  }
  const from = file === undefined ? {} : { file }
  if (value === undefined) return from
  if (!SAFE_SECRET.test(value)) return { ...from, problem: `${name}: must be printable ASCII without spaces or line breaks` }
  return { ...from, value }
}

function nonEmpty (value: unknown): string | undefined {
  return typeof value === 'string' && value !== '' ? value : undefined
}
