/** The search component's surface: what the edge, the workflows and other components may use. */
export { clearSearchHistory, deleteSearchRecord, searchAndRecord, searchHistory } from './search';
