/**
 * Which references are held (SPEC §11), told to §8's store (StateStore.markHeld), so that a keyed
 * request's claim, one round trip, says whether the approvals store need be asked at all. Almost no
 * keyed request was ever held; with Redis, asking every one would be a second round trip each.
 *
 * A mark lives as long as its approval is kept to answer a retry: until its retention, counted from
 * its decision or, while pending, from its expiry. It is written before its approval, so a crash
 * between the two leaves a mark without an approval (one wasted lookup), never an approval without
 * a mark. The marks are written again from the approvals store at every start (the memory store
 * forgot them; a Redis written by an earlier version has none): until then, every retry asks.
 */
import type { StateStore } from '../state/state-store.js'
import type { ApprovalRecord } from './approval-record.js'
import type { ApprovalStore } from './approval-store.js'

/** Marks written at once: enough to fill a Redis round trip, few enough to leave room for requests. */
const WRITE_BATCH = 500

export function heldMarkTtlMs (approval: Pick<ApprovalRecord, 'decidedAtMs' | 'expiresAtMs'>, nowMs: number, retentionMs: number): number {
  return (approval.decidedAtMs ?? approval.expiresAtMs) + retentionMs - nowMs
}

export class HeldMarks {
  #complete = false

  /** True once every stored approval's mark was written in this process: a claim's `held` is then the whole truth. */
  get complete (): boolean { return this.#complete }

  /** Writes the mark of every stored approval still kept; rejects when a store cannot answer. */
  async writeAll (approvals: ApprovalStore, state: StateStore, nowMs: number, retentionMs: number): Promise<void> {
    // A TTL of 0 or less is no mark: Redis refuses it, and lru-cache reads 0 as "never expires".
    const kept = (await approvals.list())
      .map((approval) => ({ key: approval.key, ttlMs: heldMarkTtlMs(approval, nowMs, retentionMs) }))
      .filter((mark) => mark.ttlMs > 0)
    while (kept.length > 0) await Promise.all(
      kept.splice(0, WRITE_BATCH).map(async (mark) => { await state.markHeld(mark.key, mark.ttlMs) }),
    )
    this.#complete = true
  }
}
