import t from 'tap'
import { AppError, CATALOGUE, ValidationError } from '../../../src/common/errors.js'

t.test('error catalogue', async (t) => {
  t.test('every code has a status, a type and a detail', async (t) => {
    for (const [code, entry] of Object.entries(CATALOGUE)) {
      t.ok(entry.status >= 400 && entry.status < 600, `${code} status`)
      t.ok(entry.type.length > 0 && entry.detail.length > 0, `${code} type and detail`)
    }
  })

  t.test('envelopes have exactly type, code, detail and attr', async (t) => {
    const e = new AppError('invalid_project', { attr: 'project_id' })
    t.same(e.envelope(), {
      type: 'validation_error',
      code: 'invalid_project',
      detail: CATALOGUE.invalid_project.detail,
      attr: 'project_id',
    })
  })

  t.test('the 401s the contract marks attr-absent leave attr out, and every other code keeps it', async (t) => {
    for (const code of ['invalid_api_key', 'invalid_personal_api_key'] as const) {
      t.same(new AppError(code).envelope(), { type: 'authentication_error', code, detail: CATALOGUE[code].detail }, code)
    }
    t.same(new AppError('not_authenticated').envelope(), {
      type: 'authentication_error',
      code: 'not_authenticated',
      detail: CATALOGUE.not_authenticated.detail,
      attr: null,
    })
    t.same(new AppError('not_found').envelope().attr, null)
  })

  t.test('validation errors carry the rule as code and the field as attr', async (t) => {
    const e = new ValidationError('unique', 'There is already a feature flag with this key.', 'key')
    t.equal(e.status, 400)
    t.same(e.envelope(), { type: 'validation_error', code: 'unique', detail: 'There is already a feature flag with this key.', attr: 'key' })
  })
})
