/**
 * A person id in a persons API path, read as PostHog's get_pk_or_uuid reads it: a UUID in any form Python's
 * `uuid.UUID()` takes (hyphens anywhere or none, `{…}`, `urn:uuid:`, any case), else the integer primary key.
 * skylark never shows its persons' row ids, so an integer names no person it could mean; anything else is
 * not a person id at all (PostHog's 400).
 */
export type PersonIdRef = { kind: 'uuid'; uuid: string } | { kind: 'pk' } | { kind: 'invalid' }

export function parsePersonId(raw: string): PersonIdRef {
  // Python: hex.replace('urn:', '').replace('uuid:', ''), then strip('{}') and drop every '-'.
  const hex = raw.replaceAll('urn:', '').replaceAll('uuid:', '').replace(/^[{}]+|[{}]+$/g, '').replaceAll('-', '')
  if (/^[0-9a-fA-F]{32}$/.test(hex)) {
    const h = hex.toLowerCase()
    return { kind: 'uuid', uuid: `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}` }
  }
  // Django's IntegerField takes what Python's int() takes: surrounding blanks, a sign, underscores between digits.
  if (/^\s*[-+]?\d+(_\d+)*\s*$/.test(raw)) return { kind: 'pk' }
  return { kind: 'invalid' }
}

/** PostHog's answer to a path id that is neither (posthog/api/person.py, safely_get_object). */
export function notAPersonIdDetail(raw: string): string {
  return `The ID provided does not look like a personID. If you are using a distinctId, please use /persons?distinct_id=${raw} instead.`
}
