/**
 * Who may decide (SPEC §14): a person whose email is in PROXY_CONSOLE_APPROVERS, by address or by
 * `*@<domain>`; everybody else sees the pages read-only. Compared without letter case (the
 * configuration is lower case already): sign-in proxies differ in how they spell an address.
 */
export function isApprover (patterns: readonly string[], email: string): boolean {
  const address = email.toLowerCase()
  const domain = address.slice(address.lastIndexOf('@') + 1)
  return patterns.some((pattern) => pattern === address || (pattern.startsWith('*@') && pattern.slice(2) === domain))
}

const EMAIL = /^[^\s@,*<>"]+@[^\s@,*<>"]+$/
const MAX_EMAIL_LENGTH = 254

/** An address as `console-link --as` and a sign-in proxy's header may name a person; lower case, or null. */
export function emailAddress (text: string): string | null {
  const trimmed = text.trim()
  return trimmed.length <= MAX_EMAIL_LENGTH && EMAIL.test(trimmed) ? trimmed.toLowerCase() : null
}
