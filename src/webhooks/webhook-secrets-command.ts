/**
 * `payments-auth-proxy webhook-secrets` (SPEC §10, §11): a fresh path token (24 random bytes,
 * URL-safe, `wht_` so it is recognisable in a secret store), the inbox's Standard Webhooks signing
 * secret, and the approvals' own signing and sealing secrets (each of its own: the start refuses
 * two that are one key), as variable lines to put in the secret store. Nothing is written anywhere else.
 */
import { randomBytes } from 'node:crypto'
import { newSigningSecret } from '../outbox/standard-webhooks.js'

export function newPathToken (): string {
  return `wht_${randomBytes(24).toString('base64url')}`
}

export function webhookSecretsReport (): string {
  return [
    `PROXY_WEBHOOK_PATH_TOKEN=${newPathToken()}`,
    `PROXY_WEBHOOK_SIGNING_SECRET=${newSigningSecret()}`,
    `PROXY_APPROVAL_SIGNING_SECRET=${newSigningSecret()}`,
    `PROXY_APPROVAL_SEALING_SECRET=${newSigningSecret()}`,
    '# Register https://<your host>/webhooks/<the path token> with the provider; give PROXY_WEBHOOK_SIGNING_SECRET to the application,',
    '# PROXY_APPROVAL_SIGNING_SECRET to whoever receives approval notifications, and PROXY_APPROVAL_SEALING_SECRET (also read as',
    '# PROXY_SEALING_SECRET: it seals approval and payment records) to no one but the sidecar and its approvals and payments commands.',
    '',
  ].join('\n')
}
