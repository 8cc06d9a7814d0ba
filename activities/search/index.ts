/** The search component's surface: what the edge, the workflows and other components may use. */
export type { SearchSources } from './search.ts';
export { clearSearchHistory, configureSearch, deleteSearchRecord, searchAndRecord, searchHistory } from './search.ts';
export { searchUserData } from './user-data.ts';
