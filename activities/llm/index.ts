/** The llm component's surface: what the edge, the workflows and other components may use. */
export type { AgentSettings } from './configs.ts';
export {
  effectiveConfig,
  getDefaultConfig,
  getProviderConfig,
  setDefaultConfig,
  systemOverview,
  updateOrganizationConfig,
  updateProviderConfig,
} from './configs.ts';
export { speechRoute, visionModel } from './engine-models.ts';
export type { Caller } from './gateway.ts';
export { gatewayChat, gatewayEmbed, usesModel } from './gateway.ts';
export { budgetStatus } from './reservations.ts';
export { settingsSchema } from './settings.ts';
export { llmUserData } from './user-data.ts';
export { configHistory, listAttempts, rollbackDefault, rollbackOrganization, scopesOf } from './versions.ts';
