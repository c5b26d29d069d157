import t from 'tap'
import { join } from 'node:path'
import { CookielessState, validDays } from '../../../src/persons/cookieless-state.js'
import { testDir } from '../../helpers/temp.js'
import { personsDb } from './fixtures.js'

const HOUR = 3_600_000
const NOON = Date.parse('2025-06-10T12:00:00Z')

t.test('the valid days are those some zone is in: at UTC noon yesterday, today and tomorrow', async (t) => {
  t.same(validDays(NOON), ['2025-06-09', '2025-06-10', '2025-06-11'])
  t.same(validDays(Date.parse('2025-06-10T00:30:00Z')), ['2025-06-09', '2025-06-10'], 'just past midnight: no zone is in the 11th yet')
  t.same(validDays(Date.parse('2025-06-10T23:30:00Z')), ['2025-06-10', '2025-06-11'], 'late: the 9th is past its 14 hours after UTC')
})

t.test('two connections (the consumer and the main thread) share one salt a day; none for a day no zone is in', async (t) => {
  const file = join(testDir(t), 'persons.db')
  const consumer = new CookielessState(personsDb(file))
  const main = new CookielessState(personsDb(file))
  const salt = main.saltFor('2025-06-10', NOON)!
  t.equal(salt.length, 16)
  t.same(consumer.saltFor('2025-06-10', NOON), salt, 'the first one made is kept')
  t.not(consumer.saltFor('2025-06-11', NOON)!.toString('hex'), salt.toString('hex'), 'a new salt each day')
  t.equal(consumer.saltFor('2025-06-08', NOON), null)
  t.equal(consumer.saltFor('2025-06-12', NOON), null)
})

t.test("a day's salt and state are deleted once no zone is in it", async (t) => {
  const db = personsDb()
  const state = new CookielessState(db)
  state.prepare(NOON)
  state.addIdentify(1, 'base', 'uuid-1', '2025-06-09')
  state.setSession(1, 'hash', { sessionId: 's', lastActivity: NOON }, '2025-06-09')
  t.equal(state.addIdentify(1, 'base', 'uuid-1', '2025-06-09'), 1, 'an identify counts once')
  t.equal(state.addIdentify(1, 'base', 'uuid-2', '2025-06-09'), 2)
  const count = (table: string) => db.prepare(`SELECT COUNT(*) FROM ${table} WHERE day = '2025-06-09'`).pluck().get()
  t.equal(count('cookieless_salts'), 1)
  state.prepare(NOON + 2 * HOUR - 1)
  t.equal(count('cookieless_salts'), 1, 'kept until 14 h after the day ended in UTC')
  state.prepare(NOON + 2 * HOUR)
  t.same(['cookieless_salts', 'cookieless_identifies', 'cookieless_sessions'].map(count), [0, 0, 0])
  t.equal(state.identifyCount(1, 'base'), 0)
  t.equal(state.session(1, 'hash'), undefined)
})
