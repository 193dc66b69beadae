/**
 * The templates escape every value (eta's autoEscape, on): `<%~ %>`, eta's raw output, is used only
 * for what eta itself rendered (the layout's body, included partials), never for a value; and
 * autoEscape is not turned off anywhere. A template that printed a value raw would fail here before
 * any hostile input found it.
 */
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import t from 'tap'
import { TEMPLATE_DIR } from '../../src/console/template-dir.js'

t.test('raw output is only the layout\'s body and included partials', async (t) => {
  const templates = readdirSync(TEMPLATE_DIR).filter((name) => name.endsWith('.eta'))
  t.ok(templates.length >= 10, `${templates.length} templates`)
  for (const name of templates) {
    const text = readFileSync(join(TEMPLATE_DIR, name), 'utf8')
    const raw = [...text.matchAll(/<%~\s*(.*?)\s*%>/gs)].map((m) => m[1] ?? '')
    const values = raw.filter((expression) => expression !== 'it.body' && !/^include\('\.\/[a-z-]+', [^]*\)$/.test(expression))
    t.same(values, [], `${name}: no value printed raw`)
    t.notMatch(text, /autoEscape/, `${name}: escaping is not turned off`)
  }
  const server = readFileSync(new URL('../../src/console/console-server.ts', import.meta.url), 'utf8')
  t.match(server, /new Eta\(\{ autoEscape: true \}\)/, 'the engine escapes by default')
})
