export { Cohorts, type CohortObject, type CohortRecord } from './service.js'
export { cohortLeaves, hasBehaviouralLeaf } from './filters.js'
