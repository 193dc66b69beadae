/**
 * Every optional capability, in the order the usage lists their commands and `check` prints their
 * sections. The only file that names them: adding a feature is its folder and one line here.
 */
import { approvalsFeature } from '../approvals/feature.js'
import { consoleFeature } from '../console/feature.js'
import type { Feature } from '../feature/feature.js'
import { mcpFeature } from '../mcp/feature.js'
import { oauthFeature } from '../oauth/feature.js'
import { paymentsFeature } from '../payments/feature.js'
import { payoutsFeature } from '../payouts/feature.js'
import { inboxFeature } from '../webhooks/feature.js'

export const FEATURES: readonly Feature[] = [
  inboxFeature,
  approvalsFeature,
  paymentsFeature,
  payoutsFeature,
  oauthFeature,
  mcpFeature,
  consoleFeature,
]
