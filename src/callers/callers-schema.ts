/**
 * The shape of the callers file (SPEC §7) as a TypeBox schema: types, names, patterns and unknown
 * fields are checked here, once, and every problem is named by its field path in the SPEC's form
 * (`callers[1].allow[0].methods[0]: "FETCH" is not an HTTP method`). What a schema cannot say (ids
 * unique, a key or sources, CIDRs, overlapping sources, decimals) is checked by callers-file.ts on
 * the typed document.
 */
import { Type, type Static } from '@sinclair/typebox'
import { Value } from '@sinclair/typebox/value'
import { list, object, oneOf, says, schemaProblems } from '../config/schema-problems.js'
import { JSON_POINTER_PATTERN } from '../json/strict-json.js'

export const METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'] as const
export const ENVIRONMENT_NAMES = ['sandbox', 'production'] as const
export const INTERFACE_NAMES = ['fiat', 'crypto'] as const

const pathGlobs = list(says('must be a path glob starting with "/"', Type.String({ pattern: '^/' })))
const pointer = says('must be a JSON Pointer (RFC 6901)', Type.String({ pattern: JSON_POINTER_PATTERN }))
const decimals = says('must map currency codes to amounts', Type.Record(Type.String(), says(
  'must be a plain decimal (a number or a string like "500.00")', Type.Union([Type.Number(), Type.String()]),
)))
const positiveInteger = says('must be a positive integer', Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER }))

const AllowRuleSchema = object({
  environments: Type.Optional(list(oneOf(ENVIRONMENT_NAMES, 'an environment (sandbox, production)'))),
  interfaces: Type.Optional(list(oneOf(INTERFACE_NAMES, 'an interface (fiat, crypto)'))),
  methods: Type.Optional(list(oneOf(METHODS, 'an HTTP method'))),
  paths: Type.Optional(pathGlobs),
})

/** SPEC §16: `allow` opts a caller or an entry out of the probable-duplicate check. */
const duplicatesRule = oneOf(['allow'] as const, '"allow" (the check judges every payout otherwise)')

const AmountLimitSchema = object({
  paths: Type.Optional(pathGlobs),
  amount: pointer,
  currency: pointer,
  perRequest: Type.Optional(decimals),
  perDay: Type.Optional(decimals),
  approveAbove: Type.Optional(decimals),
  duplicates: Type.Optional(duplicatesRule),
})

/** SPEC §15: who an OAuth access token's caller is, by its `sub` and its client (`client_id` or `azp`). */
const OAuthMatchSchema = object({
  subject: Type.Optional(says('must be a non-empty string', Type.String({ minLength: 1, maxLength: 1024 }))),
  clientId: Type.Optional(says('must be a non-empty string', Type.String({ minLength: 1, maxLength: 1024 }))),
})

const OAuthSchema = says(
  'must be a list of matches ({subject, clientId}: an external authorization server) or {grantable: true} (the embedded one)',
  Type.Union([
    Type.Array(OAuthMatchSchema),
    Type.Object({ grantable: Type.Literal(true) }, { additionalProperties: false }),
  ]),
)

const CallerSchema = object({
  id: says('must match [a-z0-9][a-z0-9._-]{0,63}', Type.String({ pattern: '^[a-z0-9][a-z0-9._-]{0,63}$' })),
  keySha256: Type.Optional(says('must be 64 hexadecimal digits', Type.String({ pattern: '^[0-9a-fA-F]{64}$' }))),
  sources: Type.Optional(list(says('must be an IP address or CIDR', Type.String()))),
  allow: list(AllowRuleSchema),
  rateLimit: Type.Optional(object({ requests: positiveInteger, perSeconds: positiveInteger })),
  requireExternalReference: Type.Optional(says('must be true or false', Type.Boolean())),
  amountLimits: Type.Optional(list(AmountLimitSchema)),
  approver: Type.Optional(says('must be true or false', Type.Boolean())),
  duplicates: Type.Optional(duplicatesRule),
  oauth: Type.Optional(OAuthSchema),
})

export const CallersFileSchema = says('must be an object with a list of callers', Type.Object({ callers: list(CallerSchema) }, { additionalProperties: false }))

export type CallersDocument = Static<typeof CallersFileSchema>
export type CallerEntry = CallersDocument['callers'][number]
export type AllowRuleEntry = Static<typeof AllowRuleSchema>
export type AmountLimitEntry = Static<typeof AmountLimitSchema>

export type SchemaCheck = { ok: true, document: CallersDocument } | { ok: false, problems: string[] }

export function checkCallersSchema (document: unknown): SchemaCheck {
  if (Value.Check(CallersFileSchema, document)) return { ok: true, document }
  return { ok: false, problems: schemaProblems(CallersFileSchema, document, 'callers') }
}
