/** The agents whose model calls the gateway serves; shared with the edge (which imports no model). */
export const AGENTS = ['support', 'feedback', 'documents', 'ticket_scan', 'text', 'transcription'] as const;
export type AgentName = (typeof AGENTS)[number];
