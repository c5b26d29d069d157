/**
 * ClickHouse's SQL of what a HogQL expression reads of the event's person and groups now (hogql-lookups.ts, and
 * person properties: PersonProperty), from values resolved in persons.db before the query: the value of the event's
 * key (its distinct id, or `$group_<n>`) among them.
 */
import { quote } from './clickhouse-schema.js'
import type { PersonProperty } from './experiment-types.js'
import type { LookupValues } from './hogql-lookups.js'
import { pathIndex, type HogqlValue, type PropertyPath } from './hogql-math.js'

/**
 * A person property HogQL math reads (PersonProperty), as the event's distinct id's person has it now: NULL for an
 * id of no person or of one without it (arrayElement's 0th of Nullable texts). `transform` finds the id in a hash
 * table, where a person breakdown's multiIf (clickhouse-experiment.ts) tests each text's ids in turn: a property
 * such as `ltv` has about as many texts as persons (100,000 ids over 2 million events: 2 s on 18.16).
 */
export function personPropertySql(persons: readonly PersonProperty[], path: PropertyPath): string {
  return lookupSql(persons[pathIndex(persons.map((p) => p.path))(path)]?.values ?? [], 'distinct_id')
}

/**
 * The value of `key`'s (a String) id among the values' ids, else `missing`; texts, or with `number` numbers (a
 * person's created_at in ms, whole). An array literal of 18.16 takes no NULL beside Float64s, hence the cast.
 */
export function lookupSql(values: LookupValues, key: string, number = false, missing: HogqlValue = null): string {
  const ids = values.flatMap((v, i) => v.ids.map((id) => [quote(id), i + 1] as const))
  const type = `Nullable(${number ? 'Float64' : 'String'})`
  const item = (v: string | number) => (typeof v === 'number' ? `toFloat64(${v})` : quote(v))
  if (ids.length === 0) return missing === null ? `CAST(NULL AS ${type})` : `CAST(${item(missing)} AS ${type})`
  const list = `CAST([${[...values.map((v) => v.text), ...(missing === null ? [] : [missing])].map(item).join(', ')}] AS Array(${type}))`
  return `arrayElement(${list}, transform(${key}, [${ids.map(([id]) => id).join(', ')}], [${ids.map(([, i]) => i).join(', ')}], ${missing === null ? 0 : values.length + 1}))`
}
