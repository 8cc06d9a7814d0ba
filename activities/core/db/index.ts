/** What every component's store needs; README.md here says how each server answers it. */
export { isDuplicateKey } from '../errors.ts';
export { Cache, type CacheOptions } from './cache.ts';
export { type CommandTiming, connectDb, disconnectDb, ensureIndexes, onCommandTimed } from './connection.ts';
export { byId, byIds, byKey, hasUnkeyedDocuments, idFrom, insertOnce, keyFilter, markedOnce } from './ids.ts';
export { type JsonText, jsonText, parseJsonText } from './json-text.ts';
