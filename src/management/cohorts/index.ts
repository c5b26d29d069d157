export { Cohorts, type CohortListQuery, type CohortObject, type CohortRecord } from './service.js'
export { cohortLeaves, hasBehaviouralLeaf } from './filters.js'
