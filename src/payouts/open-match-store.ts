/** Where the payout matches live (SPEC §16): beside the payments, in Redis or in the embedded file. */
import type { Logger } from 'pino'
import type { Clock } from '../clock.js'
import { openConfiguredStore } from '../storage/open-store.js'
import type { Storage } from '../storage/storage.js'
import type { MatchStore } from './match-store.js'

export async function openMatchStore (
  storePath: string,
  storage: Storage,
  deps: { log: Logger, clock: Clock },
): Promise<MatchStore> {
  return await openConfiguredStore<MatchStore>(storage, {
    inRedis: async (redis) => await (await import('./redis-match-store.js')).createRedisMatchStore({ redis, log: deps.log }),
    inFile: {
      what: 'payout matches',
      path: storePath,
      open: async (path) => await (await import('./sqlite-match-store.js')).createSqliteMatchStore(path, () => deps.clock.wallMs()),
    },
  })
}
