'use strict'
/**
 * What the bundle gets for `require('undici')` and `import … from 'undici'`
 * (scripts/bundle.mjs). undici's own entry also loads fetch and its Web classes, the cache stores,
 * the mocks, and the WebSocket and EventSource clients, on every start: a large part of the start's
 * time and of idle memory (docs/performance.md, Start and idle memory), for parts that neither this proxy nor
 * @fastify/reply-from uses. These are undici's own modules, unchanged; only the entry differs.
 *
 * Exports what the bundled code uses: our `Agent` (src/outbound), reply-from's `Agent`, `Pool`,
 * `BalancedPool`, `Client`, `Dispatcher`, `ProxyAgent` and `getGlobalDispatcher`
 * (@fastify/reply-from/lib/request.js). scripts/bundle.mjs refuses a bundle in which any other
 * module imports undici, so a new importer is looked at before it ships.
 */
const Dispatcher = require('undici/lib/dispatcher/dispatcher')
const api = require('undici/lib/api')
const { getGlobalDispatcher } = require('undici/lib/global')

// undici's entry does the same: request(), stream(), pipeline()… are Dispatcher methods.
Object.assign(Dispatcher.prototype, api)

module.exports = {
  Dispatcher,
  Client: require('undici/lib/dispatcher/client'),
  Pool: require('undici/lib/dispatcher/pool'),
  BalancedPool: require('undici/lib/dispatcher/balanced-pool'),
  Agent: require('undici/lib/dispatcher/agent'),
  ProxyAgent: require('undici/lib/dispatcher/proxy-agent'),
  getGlobalDispatcher,
}
