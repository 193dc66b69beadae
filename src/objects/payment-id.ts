/**
 * A followed payment's id (SPEC §12), and the id a request's payment will have when it creates one:
 * the duplicate check (SPEC §16) names a payout still in flight by it before the payments' step has
 * stored the intent, so the check plans the id and the payments' step takes it.
 */
import { randomBytes } from 'node:crypto'
import type { FastifyRequest } from 'fastify'

export const PAYMENT_ID = /^pay_[A-Za-z0-9_-]{22}$/

export function newPaymentId (): string {
  return `pay_${randomBytes(16).toString('base64url')}`
}

const planned = new WeakMap<FastifyRequest, string>()

/** The id this request's new payment is to have. */
export function planPaymentId (request: FastifyRequest): string {
  const id = newPaymentId()
  planned.set(request, id)
  return id
}

/** The planned id, or undefined when none was planned. */
export function plannedPaymentId (request: FastifyRequest): string | undefined {
  return planned.get(request)
}
