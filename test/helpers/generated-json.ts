/**
 * Generated JSON texts for differential tests of the strict reader and the canonical form: nested
 * values in varied spacing, names and strings with and without escapes, numbers in every spelling
 * JSON allows. A fixed seed, so a failure names its text and reproduces.
 */
export interface GeneratedJsonOptions {
  /** Let an object repeat a member name. */
  repeatNames?: boolean
}

export function generatedJsonTexts (count: number, options: GeneratedJsonOptions = {}): string[] {
  let seed = 0x2545f491
  const next = (n: number): number => {
    seed ^= seed << 13
    seed ^= seed >>> 17
    seed ^= seed << 5
    return (seed >>> 0) % n
  }
  const names = ['a', 'b', 'B', 'aa', 'é', '€', '😀', '\ufb33', 'a b', '"q"', 'x\\y', 'k:', '\u0001', '__proto__', '10', '']
  const strings = ['', 'plain', 'tab\there', 'quote"', 'ends\\', 'back\\slash', 'é€😀', '\u2028', '\u007f', '/', 'a:b', 'n'.repeat(300)]
  const numbers = ['0', '-0', '1', '-1', '1500', '0.1', '1.0', '1e2', '1E-7', '-2.5e3', '123456789012345680000', '1e21', '9007199254740993', '5e-324', '0.000001']
  const space = (): string => [' ', '', '\n', '\t', '  ', '\r\n'][next(6)] as string
  // Sometimes every character past ASCII escaped, as some clients send it.
  const str = (s: string): string => {
    const json = JSON.stringify(s)
    if (next(3) !== 0) return json
    return json.replace(/[^\x20-\x7e]/gu, (c) => (c.codePointAt(0) as number) > 0xffff
      ? JSON.stringify(c).slice(1, -1).replace(/[\ud800-\udfff]/g, (u) => `\\u${u.charCodeAt(0).toString(16)}`)
      : `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`)
  }
  const value = (depth: number): string => {
    const kind = depth > 3 ? next(4) : next(6)
    if (kind === 0 || kind === 3) return str(strings[next(strings.length)] as string)
    if (kind === 1) return numbers[next(numbers.length)] as string
    if (kind === 2) return ['true', 'false', 'null'][next(3)] as string
    if (kind === 4) return `[${space()}${Array.from({ length: next(4) }, () => value(depth + 1)).join(`${space()},${space()}`)}${space()}]`
    const used = new Set<string>()
    const members: string[] = []
    for (let i = next(6); i > 0; i--) {
      const name = names[next(names.length)] as string
      if (used.has(name) && !(options.repeatNames === true && next(2) === 0)) continue
      used.add(name)
      members.push(`${str(name)}${space()}:${space()}${value(depth + 1)}`)
    }
    return `{${space()}${members.join(`${space()},${space()}`)}${space()}}`
  }
  return Array.from({ length: count }, () => `${space()}${value(0)}${space()}`)
}
