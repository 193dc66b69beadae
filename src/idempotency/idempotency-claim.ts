/** The claim a request holds on its record key while it is forwarded (SPEC §8), as a request decoration. */
export interface IdempotencyClaim {
  key: string
  owner: string
  fingerprint: string
  /** The key is marked held (SPEC §11): an approval may answer this request. */
  held: boolean
  /** True once the answer is being recorded or the mark was dropped: nothing else may touch it. */
  settled: boolean
}

declare module 'fastify' {
  interface FastifyRequest {
    /** Set by the idempotency plugin when this request claimed a record key; null otherwise. */
    idempotency: IdempotencyClaim | null
  }
}
