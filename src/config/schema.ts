/**
 * The environment variables the proxy reads, as one TypeBox schema: env-schema validates and
 * coerces against it, and the raw settings type is derived from it, never written twice.
 * Defaults are exported with their unit in the name so docs, tests and code share one number.
 */
import { Type, type Static } from '@sinclair/typebox'

export const DEFAULT_HOST = '127.0.0.1'
export const DEFAULT_PORT = 8080
export const DEFAULT_REFRESH_MARGIN_S = 300
export const DEFAULT_TOKEN_TIMEOUT_S = 5
export const DEFAULT_TOKEN_MAX_LIFETIME_S = 24 * 60 * 60
export const DEFAULT_TOKEN_RETRY_MIN_S = 1
export const DEFAULT_TOKEN_RETRY_MAX_S = 60
export const DEFAULT_UPSTREAM_TIMEOUT_S = 30
export const DEFAULT_UPSTREAM_CONNECTIONS = 64
export const DEFAULT_BODY_LIMIT_BYTES = 1024 * 1024
export const DEFAULT_SHUTDOWN_GRACE_S = 10
export const DEFAULT_EGRESS_IP_URL = 'https://api.ipify.org'
export const DEFAULT_EGRESS_IP_INTERVAL_S = 300
export const DEFAULT_ALLOWED_CLIENTS = '127.0.0.0/8,::1/128'
export const DEFAULT_IDEMPOTENCY_KEY_POINTER = '/externalReference'
export const DEFAULT_IDEMPOTENCY_TTL_S = 86400
export const DEFAULT_REDIS_KEY_PREFIX = 'pap:'
// The webhook inbox (SPEC §10).
export const DEFAULT_WEBHOOK_VERIFY_HEADER = 'x-webhook-signature'
export const DEFAULT_WEBHOOK_BODY_LIMIT_BYTES = 256 * 1024
export const DEFAULT_WEBHOOK_RETENTION_S = 7 * 86400
export const DEFAULT_WEBHOOK_DELIVERY_TIMEOUT_S = 15
export const DEFAULT_WEBHOOK_RETRY_SCHEDULE = '5s,5m,30m,2h,5h,10h,10h'
export const DEFAULT_WEBHOOK_CONCURRENCY = 8
/**
 * Events a second the inbox takes while the proxy is busy (webhooks/intake-pacing.ts; docs/performance.md, issue 46).
 */
export const DEFAULT_WEBHOOK_RATE_WHILE_PROXYING = 250
/** SPEC §10: a later event waits at most this long behind an earlier one of its order key that keeps failing. */
export const DEFAULT_WEBHOOK_ORDER_MAX_WAIT_S = 900
export const DEFAULT_WEBHOOK_STORE_PATH = './data/webhooks.db'
export const DEFAULT_WEBHOOK_STORE_MAX_EVENTS = 1_000_000
export const DEFAULT_WEBHOOK_STORE_MAX_BYTES = 1024 * 1024 * 1024
// Approvals (SPEC §11).
export const DEFAULT_APPROVAL_TTL_S = 86400
// The console (SPEC §14).
export const DEFAULT_CONSOLE_ALLOWED_CLIENTS = DEFAULT_ALLOWED_CLIENTS
export const DEFAULT_CONSOLE_USER_HEADER = 'x-forwarded-email'
export const DEFAULT_CONSOLE_DETAIL_POINTERS =
  '/payoutMethod/accountName,/payoutMethod/accountNumber,/payoutMethod/code,/recipient,/narration,/description,/country'
// Payments followed to their final state (SPEC §12).
export const DEFAULT_PAYMENTS_PATHS = '/**'
export const DEFAULT_PAYMENTS_TRANSACTION_ID_POINTER = '/data/transactionId'
export const DEFAULT_PAYMENTS_STATUS_POINTER = '/data/status'
export const DEFAULT_PAYMENTS_SUCCEEDED_STATUSES = 'successful,success,completed'
export const DEFAULT_PAYMENTS_FAILED_STATUSES = 'failed,cancelled,canceled,reversed,rejected,expired'
export const DEFAULT_PAYMENTS_AMOUNT_POINTER = '/amount'
export const DEFAULT_PAYMENTS_CURRENCY_POINTER = '/currency'
export const DEFAULT_PAYMENTS_EVENT_TRANSACTION_ID_POINTER = '/data/transactionId'
export const DEFAULT_PAYMENTS_EVENT_REFERENCE_POINTER = '/data/externalReference'
export const DEFAULT_PAYMENTS_LOOKUP_PATH = '/transactions/{transactionId}'
export const DEFAULT_PAYMENTS_LOOKUP_SCHEDULE = '1m,5m,15m,1h,3h,6h,12h,24h'
export const DEFAULT_PAYMENTS_LOOKUP_CONCURRENCY = 2
export const DEFAULT_PAYMENTS_LOOKUPS_PER_SECOND = 5
export const DEFAULT_PAYMENTS_RETENTION_S = 30 * 86400
export const DEFAULT_DUPLICATE_WINDOW_S = 900
export const DEFAULT_DUPLICATE_RECIPIENT_POINTERS = '/payoutMethod/accountNumber,/recipient,/phoneNumber,/accountNumber,/address'

/** The secrets that may also come from a file named by `<NAME>_FILE`. */
export const SECRET_VARIABLES = [
  'PAYMENTS_PRODUCTION_API_KEY',
  'PAYMENTS_PRODUCTION_PUBLIC_KEY',
  'PAYMENTS_SANDBOX_API_KEY',
  'PAYMENTS_SANDBOX_PUBLIC_KEY',
] as const
export type SecretVariable = typeof SECRET_VARIABLES[number]

/** A string enum as JSON Schema `enum`, so a wrong value is reported with the allowed ones. */
function stringEnum<const T extends readonly string[]> (values: T, options: { default?: T[number] } = {}) {
  return Type.Unsafe<T[number]>({ type: 'string', enum: [...values], ...options })
}

const optionalString = Type.Optional(Type.String({ minLength: 1 }))
const seconds = (def: number, min: number, max: number) => Type.Integer({ default: def, minimum: min, maximum: max })

const coreProperties = {
  // Required, but checked in load-config so that its absence is reported with every other problem.
  PAYMENTS_FIAT_BASE_URL: optionalString,
  PAYMENTS_FIAT_SANDBOX_BASE_URL: optionalString,
  PAYMENTS_CRYPTO_BASE_URL: optionalString,
  PAYMENTS_CRYPTO_SANDBOX_BASE_URL: optionalString,
  PAYMENTS_PRODUCTION_API_KEY: optionalString,
  PAYMENTS_PRODUCTION_API_KEY_FILE: optionalString,
  PAYMENTS_PRODUCTION_PUBLIC_KEY: optionalString,
  PAYMENTS_PRODUCTION_PUBLIC_KEY_FILE: optionalString,
  PAYMENTS_SANDBOX_API_KEY: optionalString,
  PAYMENTS_SANDBOX_API_KEY_FILE: optionalString,
  PAYMENTS_SANDBOX_PUBLIC_KEY: optionalString,
  PAYMENTS_SANDBOX_PUBLIC_KEY_FILE: optionalString,
  PROXY_DEFAULT_ENVIRONMENT: Type.Optional(stringEnum(['production', 'sandbox'])),
  PROXY_HOST: Type.String({ minLength: 1, default: DEFAULT_HOST }),
  PROXY_PORT: Type.Integer({ minimum: 0, maximum: 65535, default: DEFAULT_PORT }),
  PROXY_TOKEN_REFRESH_MARGIN_SECONDS: seconds(DEFAULT_REFRESH_MARGIN_S, 0, 86400),
  PROXY_TOKEN_TIMEOUT_SECONDS: seconds(DEFAULT_TOKEN_TIMEOUT_S, 1, 120),
  PROXY_TOKEN_MAX_LIFETIME_SECONDS: seconds(DEFAULT_TOKEN_MAX_LIFETIME_S, 60, 7 * 86400),
  PROXY_TOKEN_RETRY_MIN_SECONDS: seconds(DEFAULT_TOKEN_RETRY_MIN_S, 1, 3600),
  PROXY_TOKEN_RETRY_MAX_SECONDS: seconds(DEFAULT_TOKEN_RETRY_MAX_S, 1, 3600),
  PROXY_EGRESS_IP_URL: Type.String({ minLength: 1, default: DEFAULT_EGRESS_IP_URL }),
  PROXY_EGRESS_IP_INTERVAL_SECONDS: seconds(DEFAULT_EGRESS_IP_INTERVAL_S, 1, 86400),
  PROXY_EXPECTED_EGRESS_IPS: Type.String({ default: '' }),
  PROXY_OUTBOUND_IP_FAMILY: stringEnum(['ipv4', 'any'], { default: 'ipv4' }),
  PROXY_UPSTREAM_TIMEOUT_SECONDS: seconds(DEFAULT_UPSTREAM_TIMEOUT_S, 1, 3600),
  PROXY_UPSTREAM_CONNECTIONS: Type.Integer({ minimum: 1, maximum: 4096, default: DEFAULT_UPSTREAM_CONNECTIONS }),
  PROXY_BODY_LIMIT_BYTES: Type.Integer({ minimum: 1024, maximum: 64 * 1024 * 1024, default: DEFAULT_BODY_LIMIT_BYTES }),
  PROXY_ALLOWED_CLIENTS: Type.String({ default: DEFAULT_ALLOWED_CLIENTS }),
  PROXY_ALLOWED_HOSTS: Type.String({ default: '' }),
  PROXY_SHUTDOWN_GRACE_SECONDS: seconds(DEFAULT_SHUTDOWN_GRACE_S, 0, 3600),
  PROXY_CALLERS_FILE: optionalString,
  PROXY_IDEMPOTENCY: stringEnum(['on', 'off'], { default: 'on' }),
  PROXY_IDEMPOTENCY_KEY_POINTER: Type.String({ default: DEFAULT_IDEMPOTENCY_KEY_POINTER }),
  PROXY_IDEMPOTENCY_TTL_SECONDS: seconds(DEFAULT_IDEMPOTENCY_TTL_S, 60, 30 * 86400),
  PROXY_PATH_ALLOW_DOTS: stringEnum(['true', 'false'], { default: 'false' }),
  PROXY_REDIS_URL: optionalString,
  PROXY_REDIS_URL_FILE: optionalString,
  PROXY_REDIS_KEY_PREFIX: Type.String({ pattern: '^[A-Za-z0-9:._-]{0,64}$', default: DEFAULT_REDIS_KEY_PREFIX }),
  // An escape for environments that set PAYMENTS_*/PROXY_* names of their own: unknown ones then warn.
  PROXY_ALLOW_UNKNOWN_VARIABLES: stringEnum(['true', 'false'], { default: 'false' }),
  LOG_LEVEL: stringEnum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'], { default: 'info' }),
}

/**
 * The inbox's (SPEC §10), approvals' (SPEC §11), payments' (SPEC §12), MCP's (SPEC §13) and the console's (SPEC §14)
 * variables, one group of the schema.
 */
const featureProperties = {
  PROXY_WEBHOOK_LISTEN: optionalString,
  PROXY_WEBHOOK_PATH_TOKEN: optionalString,
  PROXY_WEBHOOK_PATH_TOKEN_FILE: optionalString,
  PROXY_WEBHOOK_PATH_TOKEN_PREVIOUS: optionalString,
  PROXY_WEBHOOK_ALLOWED_SOURCES: Type.String({ default: '' }),
  PROXY_WEBHOOK_TRUSTED_PROXIES: Type.String({ default: '' }),
  PROXY_WEBHOOK_VERIFY_SECRET: optionalString,
  PROXY_WEBHOOK_VERIFY_SECRET_FILE: optionalString,
  PROXY_WEBHOOK_VERIFY_SCHEME: stringEnum(['header-secret', 'hmac'], { default: 'header-secret' }),
  PROXY_WEBHOOK_VERIFY_HEADER: Type.String({ pattern: '^[A-Za-z0-9-]+$', default: DEFAULT_WEBHOOK_VERIFY_HEADER }),
  PROXY_WEBHOOK_VERIFY_ALGORITHM: stringEnum(['sha256', 'sha512'], { default: 'sha256' }),
  PROXY_WEBHOOK_VERIFY_ENCODING: stringEnum(['hex', 'base64'], { default: 'hex' }),
  PROXY_WEBHOOK_VERIFY_PREFIX: Type.String({ default: '' }),
  PROXY_WEBHOOK_BODY_LIMIT_BYTES: Type.Integer({
    minimum: 1024,
    maximum: 64 * 1024 * 1024,
    default: DEFAULT_WEBHOOK_BODY_LIMIT_BYTES,
  }),
  PROXY_WEBHOOK_EVENT_ID_POINTER: optionalString,
  PROXY_WEBHOOK_EVENT_ID_HEADER: Type.Optional(Type.String({ pattern: '^[A-Za-z0-9-]+$' })),
  PROXY_WEBHOOK_RETENTION_SECONDS: seconds(DEFAULT_WEBHOOK_RETENTION_S, 3600, 365 * 86400),
  PROXY_WEBHOOK_DELIVER_TO: optionalString,
  PROXY_WEBHOOK_SIGNING_SECRET: optionalString,
  PROXY_WEBHOOK_SIGNING_SECRET_FILE: optionalString,
  PROXY_WEBHOOK_SIGNING_SECRET_PREVIOUS: optionalString,
  PROXY_WEBHOOK_DELIVERY_TIMEOUT_SECONDS: seconds(DEFAULT_WEBHOOK_DELIVERY_TIMEOUT_S, 1, 300),
  PROXY_WEBHOOK_RETRY_SCHEDULE: Type.String({ default: DEFAULT_WEBHOOK_RETRY_SCHEDULE }),
  PROXY_WEBHOOK_ORDER_KEY_POINTER: optionalString,
  PROXY_WEBHOOK_ORDER_MAX_WAIT_SECONDS: seconds(DEFAULT_WEBHOOK_ORDER_MAX_WAIT_S, 1, 365 * 86400),
  PROXY_WEBHOOK_CONCURRENCY: Type.Integer({ minimum: 1, maximum: 256, default: DEFAULT_WEBHOOK_CONCURRENCY }),
  PROXY_WEBHOOK_RATE_WHILE_PROXYING: Type.Integer({
    minimum: 0,
    maximum: 1_000_000,
    default: DEFAULT_WEBHOOK_RATE_WHILE_PROXYING,
  }),
  PROXY_WEBHOOK_STORE_PATH: Type.String({ minLength: 1, default: DEFAULT_WEBHOOK_STORE_PATH }),
  PROXY_WEBHOOK_STORE_MAX_EVENTS: Type.Integer({ minimum: 1, default: DEFAULT_WEBHOOK_STORE_MAX_EVENTS }),
  PROXY_WEBHOOK_STORE_MAX_BYTES: Type.Integer({ minimum: 1024 * 1024, default: DEFAULT_WEBHOOK_STORE_MAX_BYTES }),
  PROXY_APPROVAL_TTL_SECONDS: seconds(DEFAULT_APPROVAL_TTL_S, 60, 30 * 86400),
  PROXY_APPROVAL_NOTIFY_URL: optionalString,
  PROXY_APPROVAL_SIGNING_SECRET: optionalString,
  PROXY_APPROVAL_SIGNING_SECRET_FILE: optionalString,
  PROXY_APPROVAL_SEALING_SECRET: optionalString,
  PROXY_APPROVAL_SEALING_SECRET_FILE: optionalString,
  PROXY_SEALING_SECRET: optionalString,
  PROXY_SEALING_SECRET_FILE: optionalString,
  PROXY_CONSOLE_LISTEN: optionalString,
  PROXY_CONSOLE_PUBLIC_URL: optionalString,
  PROXY_CONSOLE_ALLOWED_CLIENTS: Type.String({ default: DEFAULT_CONSOLE_ALLOWED_CLIENTS }),
  PROXY_CONSOLE_TRUSTED_PROXIES: Type.String({ default: '' }),
  PROXY_CONSOLE_USER_HEADER: Type.String({ pattern: '^[A-Za-z0-9-]+$', default: DEFAULT_CONSOLE_USER_HEADER }),
  PROXY_CONSOLE_APPROVERS: Type.String({ default: '' }),
  PROXY_CONSOLE_DETAIL_POINTERS: Type.String({ default: DEFAULT_CONSOLE_DETAIL_POINTERS }),
  // Agents over MCP (SPEC §13).
  PROXY_MCP: stringEnum(['on', 'off'], { default: 'off' }),
  PROXY_MCP_TOOLS_FILE: optionalString,
  // Agents that sign in (SPEC §15).
  PROXY_MCP_LISTEN: optionalString,
  PROXY_MCP_PUBLIC_URL: optionalString,
  PROXY_MCP_OAUTH_ISSUER: optionalString,
  PROXY_MCP_OAUTH_AUDIENCE: optionalString,
  PROXY_MCP_OAUTH: Type.Optional(stringEnum(['embedded'])),
  PROXY_PAYMENTS: stringEnum(['on', 'off'], { default: 'off' }),
  PROXY_PAYMENTS_PATHS: Type.String({ default: DEFAULT_PAYMENTS_PATHS }),
  PROXY_PAYMENTS_TRANSACTION_ID_POINTER: Type.String({ default: DEFAULT_PAYMENTS_TRANSACTION_ID_POINTER }),
  PROXY_PAYMENTS_STATUS_POINTER: Type.String({ default: DEFAULT_PAYMENTS_STATUS_POINTER }),
  PROXY_PAYMENTS_SUCCEEDED_STATUSES: Type.String({ default: DEFAULT_PAYMENTS_SUCCEEDED_STATUSES }),
  PROXY_PAYMENTS_FAILED_STATUSES: Type.String({ default: DEFAULT_PAYMENTS_FAILED_STATUSES }),
  PROXY_PAYMENTS_AMOUNT_POINTER: Type.String({ default: DEFAULT_PAYMENTS_AMOUNT_POINTER }),
  PROXY_PAYMENTS_CURRENCY_POINTER: Type.String({ default: DEFAULT_PAYMENTS_CURRENCY_POINTER }),
  PROXY_PAYMENTS_EVENT_TRANSACTION_ID_POINTER: Type.String({ default: DEFAULT_PAYMENTS_EVENT_TRANSACTION_ID_POINTER }),
  PROXY_PAYMENTS_EVENT_REFERENCE_POINTER: Type.String({ default: DEFAULT_PAYMENTS_EVENT_REFERENCE_POINTER }),
  PROXY_PAYMENTS_CONFIRM: stringEnum(['lookup', 'event'], { default: 'lookup' }),
  PROXY_PAYMENTS_LOOKUP_PATH: Type.String({ minLength: 1, default: DEFAULT_PAYMENTS_LOOKUP_PATH }),
  PROXY_PAYMENTS_CRYPTO_LOOKUP_PATH: optionalString,
  PROXY_PAYMENTS_LOOKUP_SCHEDULE: Type.String({ default: DEFAULT_PAYMENTS_LOOKUP_SCHEDULE }),
  PROXY_PAYMENTS_LOOKUP_CONCURRENCY: Type.Integer({
    minimum: 1,
    maximum: 64,
    default: DEFAULT_PAYMENTS_LOOKUP_CONCURRENCY,
  }),
  PROXY_PAYMENTS_LOOKUPS_PER_SECOND: Type.Integer({
    minimum: 1,
    maximum: 1000,
    default: DEFAULT_PAYMENTS_LOOKUPS_PER_SECOND,
  }),
  PROXY_PAYMENTS_NOTIFY_URL: optionalString,
  PROXY_PAYMENTS_RETENTION_SECONDS: seconds(DEFAULT_PAYMENTS_RETENTION_S, 3600, 365 * 86400),
  PROXY_DUPLICATE_WINDOW_SECONDS: seconds(DEFAULT_DUPLICATE_WINDOW_S, 0, 7 * 86400),
  PROXY_DUPLICATE_RECIPIENT_POINTERS: Type.String({ default: DEFAULT_DUPLICATE_RECIPIENT_POINTERS }),
}

export const envSchema = Type.Object({ ...coreProperties, ...featureProperties })

export type RawSettings = Static<typeof envSchema>

/** Every name in the schema, `_FILE` forms included: the unknown-variable check and `.env` reading use it. */
export const KNOWN_VARIABLES: ReadonlySet<string> = new Set(Object.keys(envSchema.properties))
