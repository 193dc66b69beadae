'use strict'
/**
 * What the bundle gets for `import … from 'prom-client'` (scripts/bundle.mjs). prom-client's own
 * entry also loads the Pushgateway (node:https and with it node:tls), the cluster aggregator
 * (node:cluster) and the Summary's t-digest on every start: about 9 ms of a start here
 * (docs/performance.md, Start and idle memory), for parts this proxy does not use. These are prom-client's own
 * modules, unchanged; only the entry differs. scripts/bundle.mjs refuses a bundle whose code
 * imports a name this file does not export.
 */
module.exports = {
  Registry: require('prom-client/lib/registry'),
  Counter: require('prom-client/lib/counter'),
  Gauge: require('prom-client/lib/gauge'),
  Histogram: require('prom-client/lib/histogram'),
  collectDefaultMetrics: require('prom-client/lib/defaultMetrics'),
}
