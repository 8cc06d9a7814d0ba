/** What every component's store needs; README.md here says how each server answers it. */
export { isDuplicateKey } from '../errors.ts';
export { insertEach, insertInOrder } from './batch.ts';
export { Cache } from './cache.ts';
export { connectDb, disconnectDb, onCommandTimed } from './connection.ts';
export { byId, byIds, byKey, hasUnkeyedDocuments, idFrom, insertOnce, keyFilter, markedOnce } from './ids.ts';
export { jsonText, parseJsonText } from './json-text.ts';
export { versionsOf } from './versions.ts';
