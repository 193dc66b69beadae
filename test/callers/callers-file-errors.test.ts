/**
 * Issue 35 item 9: a callers file that does not parse says where (line and column), and one that
 * cannot be read names PROXY_CALLERS_FILE and the reason, at start (one line per problem) and in check.
 */
import { chmodSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t from 'tap'
import { parseCallersText, readCallersFile } from '../../src/callers/callers-file.js'
import { runCli } from '../helpers/child-proxy.js'
import { providerEnv, startProvider } from '../helpers/harness.js'

t.test('broken YAML and JSON are reported with line and column', async (t) => {
  const cases: Array<[string, string, string, RegExp]> = [
    ['an unclosed flow sequence', '.yaml', 'callers:\n  - id: a\n    allow: [\n', /^not valid YAML at line 4, column 1: Flow sequence in block collection must be sufficiently indented and end with a \]$/],
    ['a repeated key', '.yml', 'callers:\n  - id: a\n    id: b\n', /^not valid YAML at line 3, column 5: Map keys must be unique$/],
    ['an unquoted value in JSON', '.json', '{"callers": [\n  {"id": x}]}', /^not valid JSON at line 2, column 10$/],
    ['JSON cut short', '.json', '{"callers": [', /^not valid JSON: the text ends too early$/],
  ]
  for (const [label, extension, text, expected] of cases) {
    const load = parseCallersText(text, extension)
    t.match(load.ok ? [] : load.problems, [expected], label)
  }
})

t.test('an unreadable file names PROXY_CALLERS_FILE and the reason', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'callers-unreadable-'))
  mkdirSync(join(dir, 'a-directory.yaml'))
  const cases: Array<[string, string, RegExp]> = [
    ['missing', join(dir, 'nope.yaml'), /^PROXY_CALLERS_FILE: cannot read .*nope\.yaml \(ENOENT: no such file\)$/],
    ['a directory', join(dir, 'a-directory.yaml'), /^PROXY_CALLERS_FILE: cannot read .*a-directory\.yaml \(EISDIR: it is a directory\)$/],
  ]
  if (process.getuid?.() !== 0) {
    const locked = join(dir, 'locked.yaml')
    writeFileSync(locked, 'callers: []\n')
    chmodSync(locked, 0o000)
    cases.push(['not readable by this user', locked, /\(EACCES: permission denied: the proxy's user cannot read it\)$/])
  }
  for (const [label, file, expected] of cases) {
    const load = readCallersFile(file)
    t.match(load.ok ? [] : load.problems, [expected], label)
  }
})

t.test('at start and in check: the same lines', async (t) => {
  const provider = await startProvider(t)
  const dir = mkdtempSync(join(tmpdir(), 'callers-cli-'))
  const file = join(dir, 'callers.yaml')
  writeFileSync(file, 'callers:\n  - id: a\n    id: b\n')
  const serve = runCli(t, [], providerEnv(provider, { PROXY_CALLERS_FILE: file }))
  t.equal((await serve.exited).code, 1)
  t.match(serve.stderr(), /- .*callers\.yaml: not valid YAML at line 3, column 5: Map keys must be unique\n/)
  const check = runCli(t, ['check'], providerEnv(provider, { PROXY_CALLERS_FILE: join(dir, 'missing.yaml') }))
  t.equal((await check.exited).code, 1)
  t.match(check.stdout(), /FAIL {2}callers file: PROXY_CALLERS_FILE: cannot read .*missing\.yaml \(ENOENT: no such file\)/)
})
