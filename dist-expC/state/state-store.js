/**
 * The shared-state contract (SPEC §8–§9): idempotency claims and records, rate-limit windows and
 * day totals. Two implementations keep it: memory (one process) and Redis (several replicas share
 * one set of records and limits). Nothing above `state/` knows which one it talks to.
 *
 * Every method rejects with `StateUnavailableError` (errors.ts) when the store cannot answer
 * promptly; callers turn that into 503 STATE_UNAVAILABLE and forward nothing unchecked.
 * Keys are built by the callers of this interface and never contain a secret (API key, public
 * key, token, caller key): references and body fingerprints arrive hashed. The store prefixes them.
 */
export {};
//# sourceMappingURL=state-store.js.map