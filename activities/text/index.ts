/** The text component's surface: what the edge, the workflows and other components may use. */
export { sentences, sentiment, tokenize } from './analysis';
export { analyseOffThread, stopAnalysisThread } from './analysis-runner';
export { STOPWORDS } from './lexicon';
export { userTextExcerpts } from './store';
export { processStoredText, similarTexts, storeText } from './text';
export type { StoredTextInput } from './text';
export { textUserData } from './user-data';
