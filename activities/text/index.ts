/** The text component's surface: what the edge, the workflows and other components may use. */
export { sentences, sentiment, tokenize } from './analysis.ts';
export { analyseOffThread, stopAnalysisThread } from './analysis-runner.ts';
export { STOPWORDS } from './lexicon.ts';
export { userTextExcerpts } from './store.ts';
export type { StoredTextInput } from './text.ts';
export { processStoredText, similarTexts, storeText } from './text.ts';
export { textUserData } from './user-data.ts';
