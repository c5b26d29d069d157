import t from 'tap'
import { parsePersonId } from '../../../src/persons/index.js'

const UUID = '0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b'

t.test("a path id is read as PostHog's get_pk_or_uuid reads it", async (t) => {
  for (const form of [UUID, UUID.toUpperCase(), UUID.replaceAll('-', ''), `{${UUID}}`, `urn:uuid:${UUID}`, '0190-a1b2c3d47e5f8a9b0c1d2e3f4a5b']) {
    t.same(parsePersonId(form), { kind: 'uuid', uuid: UUID }, form)
  }
  for (const pk of ['42', ' 7 ', '-3', '1_000']) t.same(parsePersonId(pk), { kind: 'pk' }, `${pk}: an integer primary key`)
  for (const bad of ['alice', '', `${UUID}0`, 'urn:uuid:', '12a', '{}', '1__0']) t.same(parsePersonId(bad), { kind: 'invalid' }, JSON.stringify(bad))
})
