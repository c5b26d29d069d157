import t from 'tap'
import { FlagEvaluator, type HashKeyWriter, type PersonLookup } from '../../../src/flags/evaluator.js'
import { ProjectFlagCache } from '../../../src/flags/project-cache.js'
import { readDecideRequest } from '../../../src/flags/request.js'
import { flag } from './fixtures/vectors.js'

t.test("override rows are written for every active continuity flag of the project, as PostHog's service writes them", async (t) => {
  const half = { groups: [{ properties: [], rollout_percentage: 50 }] }
  const sticky = { ensure_experience_continuity: true }
  const flags = [
    flag('sticky-server', half, { ...sticky, evaluation_runtime: 'server' }),
    flag('sticky-client', half, { ...sticky, evaluation_runtime: 'client' }),
    flag('sticky-company', { aggregation_group_type_index: 0, ...half }, sticky),
    flag('sticky-device', half, { ...sticky, bucketing_identifier: 'device_id' }),
    flag('sticky-off', half, { ...sticky, active: false }),
    flag('sticky-gone', half, { ...sticky, deleted: true }),
    flag('plain', half),
  ]
  const cache = new ProjectFlagCache({ load: () => ({ flags, cohorts: [] }), revision: () => '1' }, { groupTypeMapping: () => ({ 0: 'company' }) })
  const persons: PersonLookup = {
    personFor: (_team, distinctId) => ({ id: distinctId === 'anon' ? 2 : 1, properties: {} }),
    groupProperties: () => null,
    staticCohortIdsFor: () => [],
    hashKeyOverrides: () => ({}),
  }
  const writes: string[][] = []
  const hashKeys: HashKeyWriter = {
    writeHashKeyOverrides: (_team, _persons, keys) => {
      writes.push([...keys])
      return keys.length
    },
  }
  const evaluator = new FlagEvaluator({ cache, persons, hashKeys, geoip: null, now: () => 0, offload: null, inlineMax: 1000 })
  const request = readDecideRequest({ distinct_id: 'known', $anon_distinct_id: 'anon' })
  evaluator.evaluate(1, request, 'known', null, { runtime: 'server', surveyOnly: false, environments: [] })
  t.same(writes, [['sticky-server', 'sticky-client', 'sticky-company', 'sticky-device']], 'the client flag, the group and the device flag included')
})
