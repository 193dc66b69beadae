import t from 'tap'
import { captureLogger } from '../helpers/harness.js'

t.test('secret-named fields are censored at the top level, two levels down and on errors', async (t) => {
  const { logger, logs } = captureLogger('trace')
  const secret = 'HC_redaction_marker_42'
  logger.info({ token: secret, apiKey: secret }, 'top')
  logger.info({ headers: { authorization: `Bearer ${secret}`, 'x-api-key': secret, accept: 'json' } }, 'depth 1')
  logger.info({ outer: { inner: { publicKey: secret, cookie: secret } } }, 'depth 2')
  const err = Object.assign(new Error('boom'), { apiKey: secret })
  logger.warn({ err }, 'error property')
  logger.child({ environment: 'sandbox' }).info({ nested: { token: secret } }, 'child')
  const text = logs.lines.join('\n')
  t.equal(logs.lines.length, 5)
  t.notOk(text.includes(secret), 'the marker appears nowhere')
  t.equal((logs.records[1]?.['headers'] as Record<string, unknown>)['accept'], 'json', 'other fields are kept')
  t.equal(logs.records[0]?.['token'], '[redacted]')
  t.match(logs.records[3]?.['err'], { apiKey: '[redacted]', message: 'boom' })
})
