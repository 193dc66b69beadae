/** `payments_duplicates_total{caller,outcome}` (SPEC §16): probable duplicates held for a person or refused. */
import { Counter, type Registry } from 'prom-client'

export type DuplicateOutcome = 'held' | 'refused'

export type DuplicateMetrics = (caller: string, outcome: DuplicateOutcome) => void

export function createDuplicateMetrics (registry: Registry, prefix: string): DuplicateMetrics {
  const total = new Counter({
    name: `${prefix}payments_duplicates_total`,
    help: 'Probable duplicates (the same payout under another reference, SPEC §16) by caller and outcome: held for a person, refused',
    labelNames: ['caller', 'outcome'],
    registers: [registry],
  })
  return (caller, outcome) => { total.inc({ caller, outcome }) }
}
