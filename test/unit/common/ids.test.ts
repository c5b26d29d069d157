import t from 'tap'
import { uuidv5 } from '../../../src/common/ids.js'
import { PERSON_UUID_NAMESPACE } from '../../../src/persons/index.js'

// Expected values from Python's uuid.uuid5, an independent implementation of RFC 4122.
t.test('uuidv5 gives RFC 4122 name-based ids', async (t) => {
  t.equal(uuidv5('python.org', '6ba7b810-9dad-11d1-80b4-00c04fd430c8'), '886313e1-3b8a-5372-9b90-0c9aee199e5d', 'the DNS namespace example')
  t.equal(uuidv5('2:abc', PERSON_UUID_NAMESPACE), 'fe709dba-6282-5f30-90f7-8ccbc7aa6f8a', 'a person id as PostHog derives it')
  t.equal(uuidv5('1:jöhn 🦔', PERSON_UUID_NAMESPACE), '30186115-d239-5bbd-82c8-bfc5ef709a15', 'names are hashed as UTF-8')
})

t.test('uuidv5 keeps namespaces apart when several are in use', async (t) => {
  const dns = '6ba7b810-9dad-11d1-80b4-00c04fd430c8'
  t.equal(uuidv5('2:abc', PERSON_UUID_NAMESPACE), uuidv5('2:abc', PERSON_UUID_NAMESPACE))
  t.not(uuidv5('2:abc', dns), uuidv5('2:abc', PERSON_UUID_NAMESPACE))
  t.equal(uuidv5('python.org', dns), '886313e1-3b8a-5372-9b90-0c9aee199e5d', 'after another namespace was used')
})
