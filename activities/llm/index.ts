/** The llm component's surface: what the edge, the workflows and other components may use. */
export { effectiveConfig, getDefaultConfig, getProviderConfig, setDefaultConfig, systemOverview, updateOrganizationConfig, updateProviderConfig } from './configs';
export type { AgentSettings } from './configs';
export { speechRoute, visionModel } from './engine-models';
export { gatewayChat, gatewayEmbed, usesModel } from './gateway';
export type { Caller } from './gateway';
export { budgetStatus } from './reservations';
export { settingsSchema } from './settings';
export { configHistory, listAttempts, rollbackDefault, rollbackOrganization, scopesOf } from './versions';
export { llmUserData } from './user-data';
