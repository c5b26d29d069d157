/**
 * Wire shapes: JSON Schemas and the validators/serializers compiled from them. Compile once, at start
 * (or once per worker), never per request. Imports: common/ only.
 */
import { Ajv, type Options, type ValidateFunction } from 'ajv'
import addFormatsModule from 'ajv-formats'
import fastJsonStringify from 'fast-json-stringify'
import { ValidationError } from '../common/errors.js'

// ajv-formats is CommonJS: under NodeNext its callable is the module's `default` property.
const addFormats = (addFormatsModule as unknown as { default: (ajv: Ajv) => Ajv }).default

export type { ValidateFunction } from 'ajv'

/**
 * One Ajv per process: `coerceTypes` stays off (a string where a number belongs is an error, with attr
 * set), `removeAdditional` strips unknown fields as PostHog's serializers ignore them, `allErrors` off so
 * the first problem is reported like DRF does.
 */
export function createAjv(options: Options = {}): Ajv {
  const ajv = new Ajv({ allErrors: false, removeAdditional: true, useDefaults: true, strict: false, ...options })
  addFormats(ajv)
  return ajv
}

/** The value at an Ajv instance path (`/a/0/b`). */
function valueAt(value: unknown, instancePath: string): unknown {
  let at = value
  for (const part of instancePath.split('/').slice(1)) {
    const key = part.replace(/~1/g, '/').replace(/~0/g, '~')
    at = typeof at === 'object' && at !== null ? (at as Record<string, unknown>)[key] : undefined
  }
  return at
}

/**
 * Turns the first Ajv error into the contract's 400 with `attr` naming the field. A value outside a list
 * of choices gets DRF's ChoiceField message, which PostHog's serializers answer.
 */
export function assertValid<T>(validate: ValidateFunction<T>, value: unknown): asserts value is T {
  if (validate(value)) return
  const error = validate.errors?.[0]
  const path = error?.instancePath.replace(/^\//, '').replace(/\//g, '.') ?? ''
  if (error?.keyword === 'required') throw new ValidationError('required', 'This field is required.', (error.params as { missingProperty: string }).missingProperty)
  const attr = path || null
  if (error?.keyword === 'enum') {
    const given = valueAt(value, error.instancePath)
    if (given === null) throw new ValidationError('null', 'This field may not be null.', attr)
    throw new ValidationError('invalid_choice', `"${typeof given === 'string' ? given : JSON.stringify(given)}" is not a valid choice.`, attr)
  }
  throw new ValidationError('invalid_input', `${attr ?? 'body'} ${error?.message ?? 'is invalid'}.`, attr)
}

export type Serializer = (value: unknown) => string

/** fast-json-stringify serializer; fields not in the schema are left out. */
export function compileSerializer(schema: object): Serializer {
  return fastJsonStringify(schema as Parameters<typeof fastJsonStringify>[0]) as Serializer
}

export interface WriteValidators<T> {
  create: ValidateFunction<T>
  update: ValidateFunction<T>
}

/** A resource's create and update validators, compiled on the first call and kept for the process. */
export function lazyWriteValidators<T>(createSchema: object, updateSchema: object): () => WriteValidators<T> {
  let validators: WriteValidators<T> | undefined
  return () => {
    if (!validators) {
      const ajv = createAjv()
      validators = { create: ajv.compile<T>(createSchema), update: ajv.compile<T>(updateSchema) }
    }
    return validators
  }
}
