/** The search component's surface: what the edge, the workflows and other components may use. */
export { clearSearchHistory, configureSearch, deleteSearchRecord, searchAndRecord, searchHistory } from './search.ts';
export { searchUserData } from './user-data.ts';
