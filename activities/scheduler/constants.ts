/** Scheduler values the edge validates against, kept apart from the schemas so it imports no model. */
export const EVENT_TYPES = ['email', 'loyalty', 'billing', 'support', 'feedback', 'documents', 'webhook'] as const;
export type EventType = (typeof EVENT_TYPES)[number];
export const OVERLAPS = ['skip', 'buffer_one', 'allow_all'] as const;
export type Overlap = (typeof OVERLAPS)[number];
export const DEFAULT_CATCHUP_MINUTES = 60;
