import { readdirSync, readFileSync } from 'node:fs'
import t from 'tap'
import { KNOWN_VARIABLES } from '../../src/config/schema.js'
import { ERROR_STATUS } from '../../src/errors.js'

const read = (path: string): string => readFileSync(new URL(`../../${path}`, import.meta.url), 'utf8')

t.test('docs/reference/configuration.md names every setting the schema knows, and no other', async (t) => {
  const page = read('docs/reference/configuration.md')
  for (const name of KNOWN_VARIABLES) {
    const documented = page.includes(`\`${name}\``) || (name.endsWith('_FILE') && page.includes('_FILE`'))
    t.ok(documented, `${name} is documented`)
  }
  const named = new Set([...page.matchAll(/`((?:PAYMENTS|PROXY)_[A-Z0-9_]+)`/g)].map((m) => m[1] as string))
  for (const name of named) t.ok(KNOWN_VARIABLES.has(name), `${name} is a real setting`)
})

t.test('docs/reference/http-api.md lists every error code', async (t) => {
  const page = read('docs/reference/http-api.md')
  for (const code of Object.keys(ERROR_STATUS)) t.ok(page.includes(`\`${code}\``), `${code} is listed`)
})

t.test('every docs page is linked from the README', async (t) => {
  const readme = read('README.md')
  const pages = readdirSync(new URL('../../docs/', import.meta.url), { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.md'))
  t.ok(pages.length >= 10, `${pages.length} pages`)
  for (const page of pages) t.ok(readme.includes(`(docs/${page})`), `docs/${page} is linked`)
  t.ok(readme.split('\n').length <= 200, `the README stays short (${readme.split('\n').length} lines)`)
})
