/**
 * Annotations (PostHog's Annotation): a dated note on a project's charts, or on every project of the
 * organisation with scope `organization`; soft-deleted with PATCH, never removed.
 */
export { Annotations } from './service.js'
export { ANNOTATION_SCOPES, CREATION_TYPES, type AnnotationRecord, type AnnotationScope } from './record.js'
export { readAnnotation, readListQuery, type AnnotationFields, type AnnotationListQuery } from './input.js'
export type { AnnotationObject } from './serialize.js'
