/**
 * HogQL's URL functions (PostHog maps them to ClickHouse's of the same name), computed as current ClickHouse does
 * (src/Functions/URL): not RFC 3986, but its own scans for the delimiters, on bytes. A URL's parts are found at
 * ASCII delimiters, so character offsets serve wherever a scan passes only ASCII; `protocol`'s length rule and
 * decodeURLComponent read bytes.
 */
import { bytesText, hogqlTextSql, joinedText, textBytes } from './hogql-values.js'

/** The URL functions, each of one URL (extractURLParameter's name too), as hogql-functions.ts's FUNCTIONS lists them. */
export const URL_SPECS = [
  ['protocol', 1, 1],
  ['domain', 1, 1],
  ['domainWithoutWWW', 1, 1],
  ['topLevelDomain', 1, 1],
  ['path', 1, 1],
  ['pathFull', 1, 1],
  ['queryString', 1, 1],
  ['fragment', 1, 1],
  ['queryStringAndFragment', 1, 1],
  ['extractURLParameter', 2, 2],
  ['cutWWW', 1, 1],
  ['cutQueryString', 1, 1],
  ['cutFragment', 1, 1],
  ['cutQueryStringAndFragment', 1, 1],
  ['decodeURLComponent', 1, 1],
  ['port', 1, 1],
  ['cutURLParameter', 2, 2],
] as const
export type UrlFunction = (typeof URL_SPECS)[number][0]
const URL_FUNCTIONS: ReadonlySet<string> = new Set(URL_SPECS.map(([fn]) => fn))
export const isUrlFunction = (fn: string): fn is UrlFunction => URL_FUNCTIONS.has(fn)

const ALNUM = /[A-Za-z0-9]/
/** A loose byte's code unit (hogql-values.ts's textBytes). */
const isLooseByte = (unit: number): boolean => unit >= 0xdc80 && unit <= 0xdcff
/** What ends a host's scan with no host (getURLHost's "restricted symbols"). */
const RESTRICTED = new Set(' \t<>%{}|\\^~[];=&')

/**
 * getURLHost: [start, end) of the host, after a scheme of at most 13 bytes' `://` or a leading `//`, with a dot and
 * something after it; null if none.
 */
function hostRange(url: string): [number, number] | null {
  let pos = 0
  const first = url.charCodeAt(0)
  if (url.startsWith('//')) pos = 2
  else if (first < 0x80 || isLooseByte(first)) {
    // The scan of the first 16 bytes from the second (one byte in, whatever the first is): a character beyond ASCII
    // stops it as any other symbol does, a multi-byte first character at once.
    let i = 1
    for (; i < Math.min(url.length, 16); i++) {
      const c = url[i]
      if (ALNUM.test(c) || c === '.' || c === '-' || c === '+') continue
      if (RESTRICTED.has(c)) return null
      break
    }
    if (i <= 13 && url.startsWith('://', i)) pos = i + 3
  }
  let dot = -1
  let start = pos
  for (; pos < url.length; pos++) {
    const c = url[pos]
    if (c === '.') dot = pos
    else if (c === ':' || c === '/' || c === '?' || c === '#') break
    else if (c === '@') start = pos + 1
    else if (RESTRICTED.has(c)) return null
  }
  return dot < 0 || start >= pos || pos - dot === 1 || url[start] === '.' ? null : [start, pos]
}

function host(url: string): string {
  const range = hostRange(url)
  return range === null ? '' : url.slice(...range)
}

/** The digits after the host's `:` up to a `/` or the end, as a number to 65535; 0 if none, if anything else is there, or if larger. */
function port(url: string): number {
  const range = hostRange(url)
  if (range === null || url[range[1]] !== ':') return 0
  const digits = url.slice(range[1] + 1, indexOfAny(url, '/', range[1] + 1))
  return /^[0-9]*$/.test(digits) && Number(digits) <= 65535 ? Number(digits) : 0
}

/** Where the first `name=` after the first `?` or `#` stands whose `name` follows a `?`, `#` or `&`; -1 if none. */
function parameterAt(url: string, needle: string): number {
  for (let at = url.indexOf(needle, indexOfAny(url, '?#') + 1); at >= 0; at = url.indexOf(needle, at + needle.length)) {
    if ('?#&'.includes(url[at - 1])) return at
  }
  return -1
}

/** parameterAt's `name=` with its value, cut out with the `&` after it, or else the `&` before it; the URL as it is if none. */
function cutParameter(url: string, name: string): string {
  const at = parameterAt(url, `${name}=`)
  if (at < 0) return url
  const end = indexOfAny(url, '&#', at + name.length + 1)
  return cut(url, url[end] === '&' ? [at, end + 1] : [url[at - 1] === '&' ? at - 1 : at, end])
}

/** The scheme (a letter, then letters, digits, `+`, `-`, `.`) when a `:` follows it and at least 4 bytes are left from there. */
function protocol(url: string): string {
  const scheme = /^[A-Za-z][A-Za-z0-9+.-]*/.exec(url)?.[0] ?? ''
  if (scheme === '' || url[scheme.length] !== ':') return ''
  const rest = url.slice(scheme.length)
  return rest.length >= 4 || textBytes(rest).length >= 4 ? scheme : ''
}

/** From the first `/` not doubled (after a `//`, the next one), to the end or to `?` or `#`. */
function path(url: string, full: boolean): string {
  let at = url.indexOf('/')
  if (at < 0) return ''
  if (url[at + 1] === '/') {
    at = url.indexOf('/', at + 2)
    if (at < 0) return ''
  }
  return full ? url.slice(at) : url.slice(at, indexOfAny(url, '?#', at))
}

/** The first index of any of `chars` from `from`, or the text's length. */
function indexOfAny(text: string, chars: string, from = 0): number {
  for (let i = from; i < text.length; i++) if (chars.includes(text[i])) return i
  return text.length
}

/** [start, end) of the query string (from its `?`, to the first `#` after it), or null. */
function queryRange(url: string): [number, number] | null {
  const at = url.indexOf('?')
  return at < 0 ? null : [at, indexOfAny(url, '#', at)]
}

/** [start, end) of the query string and fragment: from the first `?`, else from the first `#`, to the end; or null. */
function queryAndFragmentRange(url: string): [number, number] | null {
  const at = url.indexOf('?')
  const from = at < 0 ? url.indexOf('#') : at
  return from < 0 ? null : [from, url.length]
}

/** cutWWW's `www.`: in the host after `//` where the first `/` is that `//` at the start or right after the protocol's `:`. */
function wwwRange(url: string): [number, number] | null {
  const slash = url.indexOf('/')
  if (slash < 0 || (slash !== 0 && slash !== protocol(url).length + 1) || url[slash + 1] !== '/') return null
  let start = slash + 2
  for (let i = start; i < url.length; i++) {
    const c = url[i]
    if (c === '@') start = i + 1
    else if (c === ':' || c === '/' || c === '?' || c === '#') break
  }
  return start + 4 < url.length && url.startsWith('www.', start) ? [start, start + 4] : null
}

/** The value of parameterAt's `name=`, to the next `&` or `#` (or to a NUL byte, where neither follows): not decoded; '' if none. */
function parameter(url: string, name: string): string {
  const at = parameterAt(url, `${name}=`)
  if (at < 0) return ''
  const from = at + name.length + 1
  const end = indexOfAny(url, '&#', from)
  return url.slice(from, end === url.length ? indexOfAny(url, '\0', from) : end)
}

const HEX = /^[0-9A-Fa-f]$/
const isHex = (byte: number | undefined): boolean => byte !== undefined && HEX.test(String.fromCharCode(byte))

/** Each `%` and two hex digits as its byte; a `%` without them is kept with the two bytes after it, read no further. */
function decodeComponent(text: string): string {
  if (!text.includes('%')) return text
  const bytes = textBytes(text)
  const out = Buffer.alloc(bytes.length)
  let n = 0
  for (let i = 0; i < bytes.length; ) {
    if (bytes[i] !== 0x25) out[n++] = bytes[i++]
    else if (isHex(bytes[i + 1]) && isHex(bytes[i + 2])) {
      out[n++] = Number.parseInt(String.fromCharCode(bytes[i + 1], bytes[i + 2]), 16)
      i += 3
    } else for (const end = Math.min(i + 3, bytes.length); i < end; ) out[n++] = bytes[i++]
  }
  return bytesText(out.subarray(0, n))
}

const cut = (url: string, range: [number, number] | null): string => (range === null ? url : joinedText(url.slice(0, range[0]) + url.slice(range[1])))

/** A URL function of texts that are all there (hogql-math.ts's call). */
export function urlCall(fn: UrlFunction, [url, name]: string[]): string | number {
  switch (fn) {
    case 'protocol':
      return protocol(url)
    case 'domain':
      return host(url)
    case 'domainWithoutWWW': {
      const h = host(url)
      return h.length > 4 && h.startsWith('www.') ? h.slice(4) : h
    }
    case 'topLevelDomain': {
      const h = host(url)
      const tld = h.slice(h.lastIndexOf('.') + 1)
      return h.includes('.') && !/^[0-9]/.test(tld) ? tld : ''
    }
    case 'path':
    case 'pathFull':
      return path(url, fn === 'pathFull')
    case 'queryString': {
      const r = queryRange(url)
      return r === null ? '' : url.slice(r[0] + 1, r[1])
    }
    case 'fragment': {
      const at = url.indexOf('#')
      return at < 0 ? '' : url.slice(at + 1)
    }
    case 'queryStringAndFragment': {
      const r = queryAndFragmentRange(url)
      return r === null ? '' : url.slice(r[0] + (url[r[0]] === '?' ? 1 : 0))
    }
    case 'extractURLParameter':
      return parameter(url, name)
    case 'cutWWW':
      return cut(url, wwwRange(url))
    case 'cutQueryString':
      return cut(url, queryRange(url))
    case 'cutFragment': {
      const at = url.indexOf('#')
      return cut(url, at < 0 ? null : [at, url.length])
    }
    case 'cutQueryStringAndFragment':
      return cut(url, queryAndFragmentRange(url))
    case 'decodeURLComponent':
      return decodeComponent(url)
    case 'port':
      return port(url)
    case 'cutURLParameter':
      return cutParameter(url, name)
  }
}

/** getURLHost's restricted symbols as a regex class (hogqlTextSql escapes it for the literal). */
const RESTRICTED_CLASS = '[ \\t<>%{}|\\\\^~\\[\\];=&]'
const SCHEME = '^[A-Za-z0-9.+\\-]{0,12}://'

/**
 * getURLHost in 18.16's SQL, of `v` (a name for a String that is not NULL): the bytes after the first (the scheme's
 * scan starts at the second byte, whatever the first is), then the authority (`a`) cut at its first `:`, `/`, `?` or
 * `#` by splits (18.16's regex classes don't step over bytes of no character) from the rest after the scheme (`r`),
 * the host after its last `@`. `then` writes the value of the host's SQL, which may read `r` and `a`.
 */
function hostSql(v: string, r: string, a: string, then: (host: string) => string): string {
  const window = `substring(${v}, 2, 15)`
  const rest = `multiIf(startsWith(${v}, '//'), substring(${v}, 3), match(${window}, ${hogqlTextSql(SCHEME)}), substring(${v}, 2 + length(extract(${window}, ${hogqlTextSql(SCHEME)}))), ${v})`
  const schemeRefused = `(NOT startsWith(${v}, '//') AND match(${window}, ${hogqlTextSql(`^[A-Za-z0-9.+\\-]*${RESTRICTED_CLASS}`)}))`
  const authority = `splitByChar(':', splitByChar('/', splitByChar('?', splitByChar('#', ${r})[1])[1])[1])[1]`
  const h = `splitByChar('@', ${a})[-1]`
  const refused = `${schemeRefused} OR match(${a}, ${hogqlTextSql(RESTRICTED_CLASS)}) OR position(${a}, '.') = 0 OR endsWith(${a}, '.') OR empty(${h}) OR startsWith(${h}, '.')`
  return `arrayMap(${r} -> arrayMap(${a} -> ${then(`if(${refused}, '', ${h})`)}, [${authority}])[1], [${rest}])[1]`
}

/** port() in 18.16's SQL over hostSql's names: the digits after the authority's `:`, to the first `/`. */
function portSql(host: string, r: string, a: string, p: string): string {
  const digits = `splitByChar('/', substring(${r}, length(${a}) + 2))[1]`
  const value = `if(match(${p}, '^[0-9]*$') AND length(replaceRegexpOne(${p}, '^0+', '')) <= 5 AND toUInt64OrZero(${p}) <= 65535, toFloat64(toUInt64OrZero(${p})), toFloat64(0))`
  return `if(empty(${host}) OR substring(${r}, length(${a}) + 1, 1) != ':', toFloat64(0), arrayMap(${p} -> ${value}, [${digits}])[1])`
}

/** path() and pathFull() in 18.16's SQL, of `v` as above: from the first `/`, or from the next after a `//`. */
function pathSql(v: string, full: boolean, r: string): string {
  const first = `position(${v}, '/')`
  const after = `substring(${v}, ${first} + 2)`
  const from = `multiIf(${first} = 0, '', substring(${v}, ${first} + 1, 1) != '/', substring(${v}, ${first}), position(${after}, '/') = 0, '', substring(${after}, position(${after}, '/')))`
  // cutQueryString then cutFragment leave what comes before the first `?` or `#`, as 18.16 computes both as current servers do.
  return full ? from : `arrayMap(${r} -> cutFragment(cutQueryString(${r})), [${from}])[1]`
}

/**
 * cutURLParameter in 18.16's SQL (whose own gives up at a `name=` that no `?`, `#` or `&` comes before): the first
 * `?name=`, `#name=` or `&name=` from the first `?` or `#` (the one extractURLParameter reads, the name having none of
 * those), its delimiter at byte `k`, the value's bytes `h` in the rest `t`. `f` and `t` find k (`t` free there).
 */
function cutParameterSql(v: string, name: string, [k, t, h, f]: readonly string[]): string {
  const positive = (items: readonly string[]) => `arrayReduce('min', arrayFilter(${t} -> ${t} > 0, [${items.join(', ')}]))`
  const at = positive(['?', '#', '&'].map((d) => `position(substring(${v}, ${f}), ${hogqlTextSql(`${d}${name}=`)})`))
  const delimiter = `arrayMap(${f} -> if(${f} = 0, 0, arrayMap(${k} -> if(${k} = 0, 0, ${f} + ${k} - 1), [${at}])[1]), [${positive([`position(${v}, '?')`, `position(${v}, '#')`])}])[1]`
  const after = `substring(${t}, ${h} + 1, 1)`
  const joined = `multiIf(${after} = '&', concat(substring(${v}, 1, ${k}), substring(${t}, ${h} + 2)), substring(${v}, ${k}, 1) = '&', concat(substring(${v}, 1, ${k} - 1), substring(${t}, ${h} + 1)), concat(substring(${v}, 1, ${k}), substring(${t}, ${h} + 1)))`
  const cut = `arrayMap(${t} -> arrayMap(${h} -> ${joined}, [length(splitByChar('&', splitByChar('#', ${t})[1])[1])])[1], [substring(${v}, ${k} + ${1 + textBytes(name).length + 1})])[1]`
  return `arrayMap(${k} -> if(${k} = 0, ${v}, ${cut}), [${delimiter}])[1]`
}

/** The functions 18.16 computes as current servers do, checked on its server (test/unit/storage/hogql-urls.test.ts). */
const NATIVE: ReadonlySet<UrlFunction> = new Set(['protocol', 'queryString', 'fragment', 'extractURLParameter', 'cutWWW', 'cutQueryString', 'cutFragment', 'decodeURLComponent'])

/** How many names urlCallSql takes. */
export const URL_SQL_NAMES = 6

/**
 * urlCall in ClickHouse's SQL of the URL's SQL (and the name literal's value): the server's function where 18.16's is
 * current servers', else written out over lambdas' parameters (`names`: URL_SQL_NAMES unique in the query), NULL for NULL.
 */
export function urlCallSql(fn: UrlFunction, url: string, name: string | undefined, names: readonly string[]): string {
  if (NATIVE.has(fn)) return `${fn}(${url}${name === undefined ? '' : `, ${hogqlTextSql(name)}`})`
  const [n, v, r, a, h] = names
  const body = (() => {
    switch (fn) {
      case 'path':
      case 'pathFull':
        return pathSql(v, fn === 'pathFull', r)
      case 'queryStringAndFragment':
        return `if(position(${v}, '?') > 0, queryStringAndFragment(${v}), if(position(${v}, '#') > 0, concat('#', fragment(${v})), ''))`
      case 'cutQueryStringAndFragment':
        return `if(position(${v}, '?') > 0, cutQueryStringAndFragment(${v}), cutFragment(${v}))`
      case 'port':
        return hostSql(v, r, a, (host) => portSql(host, r, a, h))
      case 'cutURLParameter':
        return cutParameterSql(v, name!, names.slice(2))
      default: {
        const tld = `splitByChar('.', ${h})[-1]`
        const value = fn === 'domain' ? h : fn === 'domainWithoutWWW' ? `if(length(${h}) > 4 AND startsWith(${h}, 'www.'), substring(${h}, 5), ${h})` : `if(position(${h}, '.') = 0 OR match(${tld}, '^[0-9]'), '', ${tld})`
        return hostSql(v, r, a, (host) => `arrayMap(${h} -> ${value}, [${host}])[1]`)
      }
    }
  })()
  const none = fn === 'port' ? 'CAST(NULL AS Nullable(Float64))' : 'CAST(NULL AS Nullable(String))'
  return `arrayMap(${n} -> if(isNull(${n}), ${none}, arrayMap(${v} -> ${body}, [assumeNotNull(${n})])[1]), [${url}])[1]`
}
