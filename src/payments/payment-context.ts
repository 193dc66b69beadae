/**
 * The state machine's context from the configuration (SPEC §12): the clock's time and a jitter, the
 * schedule, how long a forward can be in flight, which statuses are final, when a look-up an event
 * asks for would be due (the sidecar's pacer; now, for a command), and, per record, whether it can
 * be looked up and whether its final events wait for a look-up.
 */
import type { PaymentsConfig } from '../config/payment-config.js'
import { lookupPathOf } from './lookup-path.js'
import type { EventLookupPacer } from './event-lookup-pacer.js'
import type { MachineContext } from './payment-machine.js'
import { classifyStatus } from './provider-reading.js'

export type ContextFor = (nowMs: number) => MachineContext

export function machineContext (
  config: PaymentsConfig,
  inFlightMs: number,
  random: () => number = Math.random,
  pacer: EventLookupPacer | null = null,
): ContextFor {
  const classify: MachineContext['classify'] = (status) => classifyStatus(status, config)
  const canLookUp: MachineContext['canLookUp'] = (record) => lookupPathOf(config.lookupPaths, record) !== null
  // Wherever a look-up path is configured (SPEC §12): without one, events alone settle.
  const confirmByLookup: MachineContext['confirmByLookup'] = (record) => config.confirm === 'lookup' && (config.lookupPaths[record.interface as 'fiat' | 'crypto'] ?? null) !== null
  return (nowMs) => ({
    nowMs,
    random: random(),
    scheduleMs: config.lookupScheduleMs,
    inFlightMs,
    canLookUp,
    confirmByLookup,
    classify,
    eventLookupAtMs: pacer?.next(nowMs) ?? nowMs,
  })
}
