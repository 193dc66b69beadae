import t from 'tap'
import { isoTimeAt } from '../../src/logger.js'

t.test('the log timestamp is toISOString() of its millisecond', async (t) => {
  const seconds = [0, Date.UTC(2026, 10, 23, 13, 29, 51), Date.UTC(2028, 1, 29, 23, 59, 59), Date.UTC(2099, 11, 31, 23, 59, 59)]
  const millis = [0, 1, 9, 10, 42, 99, 100, 500, 998, 999]
  for (const s of seconds) {
    for (const m of millis) {
      const ms = s + m
      t.equal(isoTimeAt(ms), `,"time":"${new Date(ms).toISOString()}"`, new Date(ms).toISOString())
    }
  }
  // Across a second boundary and back, as clocks stepped by NTP can do.
  for (const ms of [Date.UTC(2026, 0, 1) - 1, Date.UTC(2026, 0, 1), Date.UTC(2026, 0, 1) - 1]) {
    t.equal(isoTimeAt(ms), `,"time":"${new Date(ms).toISOString()}"`)
  }
})
