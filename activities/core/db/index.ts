/** What every component's store needs; README.md here says how each server answers it. */
export { connectDb, disconnectDb, ensureIndexes, onCommandTimed, type CommandTiming } from './connection.ts';
export { byId, byIds, byKey, hasUnkeyedDocuments, idFrom, insertOnce, keyFilter, markedOnce } from './ids.ts';
export { jsonText, parseJsonText, type JsonText } from './json-text.ts';
export { Cache, type CacheOptions } from './cache.ts';
export { isDuplicateKey } from '../errors.ts';
