/** What every component's store needs; README.md here says how each server answers it. */
export { connectDb, disconnectDb, ensureIndexes, onCommandTimed, type CommandTiming } from './connection';
export { byId, byIds, byKey, hasUnkeyedDocuments, idFrom, insertOnce, keyFilter, markedOnce } from './ids';
export { jsonText, parseJsonText, type JsonText } from './json-text';
export { Cache, type CacheOptions } from './cache';
export { isDuplicateKey } from '../errors';
