/**
 * `payments-auth-proxy webhook-secrets` (SPEC §10): a fresh path token (24 random bytes, URL-safe,
 * `wht_` so it is recognisable in a secret store) and a Standard Webhooks signing secret, as
 * variable lines to put in the secret store. Nothing is written anywhere else.
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
    '# Register https://<your host>/webhooks/<the path token> with the provider; give the signing secret to the application.',
    '',
  ].join('\n')
}
