export { Cohorts, type CohortActor, type CohortListQuery, type CohortObject, type CohortRecord } from './service.js'
export { cohortLeaves, hasBehaviouralLeaf } from './filters.js'
export { addPersonsToStaticCohort, createCohort, removePersonFromStaticCohort, type StaticCohortMembers } from './members.js'
export { cohortCondition, cohortId, cohortMembership, type CohortById, type CohortSource } from './condition.js'
