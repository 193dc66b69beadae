/**
 * The company's identity provider in the OAuth tests (SPEC §15): a real `oidc-provider` on
 * 127.0.0.1 port 0, never a mock. It issues RFC 9068 JWT access tokens for the proxy's resource by
 * the client credentials grant (its `sub` is then the client's id), signed with keys the test made,
 * so a test can also sign tokens the provider would never issue (expired, for another audience)
 * with the provider's own key. `rotate` publishes a new key first in the JWKS, as a provider
 * rotating its keys does; `jwksFetches` counts who asked for the keys.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { Test } from 'tap'
import { exportJWK, generateKeyPair, SignJWT, type CryptoKey, type JWK, type JWTPayload } from 'jose'
import Provider from 'oidc-provider'

export interface SigningKey { kid: string, privateKey: CryptoKey, publicJwk: JWK, privateJwk: JWK }

export interface IdentityProvider {
  issuer: string
  keys: () => readonly SigningKey[]
  jwksFetches: () => number
  /** A token as the provider issues it to `clientId` (client credentials, `scope=payments`). */
  token: (clientId: string) => Promise<string>
  /** Signs claims with the provider's current key (or `key`): tokens it would never issue. */
  sign: (claims: JWTPayload, options?: { key?: SigningKey, expiresInS?: number }) => Promise<string>
  /** Publishes a new key before the old one and signs with it from now on. */
  rotate: () => Promise<SigningKey>
}

export const CLIENT_SECRET = 'idp-client-secret-0123456789abcdefghijklmnopqrstuv'

export async function newSigningKey (kid: string): Promise<SigningKey> {
  const { privateKey, publicKey } = await generateKeyPair('ES256', { extractable: true })
  const publicJwk = { ...await exportJWK(publicKey), kid, alg: 'ES256', use: 'sig' }
  return { kid, privateKey, publicJwk, privateJwk: { ...await exportJWK(privateKey), kid, alg: 'ES256', use: 'sig' } }
}

export async function startIdentityProvider (t: Test, options: { resource: string, clients: readonly string[] }): Promise<IdentityProvider> {
  let handler: (req: IncomingMessage, res: ServerResponse) => void = (_req, res) => { res.statusCode = 503; res.end() }
  let fetches = 0
  const server = createServer((req, res) => {
    if (req.url?.startsWith('/jwks') === true) fetches++
    handler(req, res)
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.teardown(() => new Promise<void>((resolve) => { server.closeAllConnections(); server.close(() => { resolve() }) }))
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  let keys = [await newSigningKey('key-1')]

  const build = (): void => {
    const provider = new Provider(issuer, {
      clients: options.clients.map((clientId) => ({
        client_id: clientId,
        client_secret: CLIENT_SECRET,
        grant_types: ['client_credentials'],
        redirect_uris: [],
        response_types: [],
        token_endpoint_auth_method: 'client_secret_post',
        id_token_signed_response_alg: 'ES256',
      })),
      jwks: { keys: keys.map((k) => k.privateJwk) },
      scopes: ['payments'],
      features: {
        devInteractions: { enabled: false },
        clientCredentials: { enabled: true },
        resourceIndicators: {
          enabled: true,
          defaultResource: () => options.resource,
          useGrantedResource: () => true,
          getResourceServerInfo: () => ({ scope: 'payments', audience: options.resource, accessTokenFormat: 'jwt', accessTokenTTL: 3600, jwt: { sign: { alg: 'ES256', kid: keys[0]?.kid } } }),
        },
      },
    })
    const callback = provider.callback()
    handler = (req, res) => { void callback(req, res) }
  }
  build()

  return {
    issuer,
    keys: () => keys,
    jwksFetches: () => fetches,
    async token (clientId) {
      const res = await fetch(`${issuer}/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ grant_type: 'client_credentials', client_id: clientId, client_secret: CLIENT_SECRET, scope: 'payments', resource: options.resource }),
      })
      const body = await res.json() as { access_token?: string, error?: string, error_description?: string }
      if (body.access_token === undefined) throw new Error(`the identity provider issued no token: ${body.error ?? res.status} ${body.error_description ?? ''}`)
      return body.access_token
    },
    async sign (claims, signOptions = {}) {
      const key = signOptions.key ?? keys[0]
      if (key === undefined) throw new Error('no key')
      const nowS = Math.floor(Date.now() / 1000)
      return await new SignJWT({ iat: nowS, exp: nowS + (signOptions.expiresInS ?? 600), ...claims })
        .setProtectedHeader({ alg: 'ES256', kid: key.kid, typ: 'at+jwt' })
        .sign(key.privateKey)
    },
    async rotate () {
      const next = await newSigningKey(`key-${keys.length + 1}`)
      keys = [next, ...keys]
      build()
      return next
    },
  }
}
