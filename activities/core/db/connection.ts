/**
 * The one database connection of a process (mongoose's default connection). Every store's models
 * are registered on it when their module is imported, so indexes are created for all of them at
 * connect time: unique indexes back every idempotency promise and every slot, so they must exist
 * before the first request.
 */
import mongoose from 'mongoose';

let connected = false;

/** What one finished database command cost: its collection (or '-'), its name, milliseconds, success. */
export type CommandTiming = (collection: string, command: string, ms: number, ok: boolean) => void;
const timings = new Set<CommandTiming>();

/**
 * Calls `listener` after every command this process sends (the driver's command monitoring):
 * the edge turns it into its `db_command_duration_seconds` metric, the scale bench into the
 * database time of each hot path. Returns the unsubscribe function.
 */
export function onCommandTimed(listener: CommandTiming): () => void {
  timings.add(listener);
  return () => timings.delete(listener);
}

/** Commands whose first field names a collection (find, insert, update, delete, aggregate, count, …). */
const NAMED_COLLECTION = new Set([
  'find',
  'insert',
  'update',
  'delete',
  'aggregate',
  'count',
  'distinct',
  'findAndModify',
  'createIndexes',
  'listIndexes',
  'drop',
]);

function watchCommands(): void {
  const client = mongoose.connection.getClient();
  const pending = new Map<number, { collection: string; command: string }>();
  client.on('commandStarted', (e) => {
    if (!timings.size) return;
    const target = e.command[e.commandName];
    const collection =
      e.commandName === 'getMore'
        ? String(e.command.collection ?? '-')
        : NAMED_COLLECTION.has(e.commandName) && typeof target === 'string'
          ? target
          : '-';
    pending.set(e.requestId, { collection, command: e.commandName });
  });
  const done = (ok: boolean) => (e: { requestId: number; duration: number }) => {
    const started = pending.get(e.requestId);
    if (!started) return;
    pending.delete(e.requestId);
    for (const l of timings) l(started.collection, started.command, e.duration, ok);
  };
  client.on('commandSucceeded', done(true));
  client.on('commandFailed', done(false));
}

export async function connectDb(uri: string): Promise<void> {
  if (connected) return;
  if (!uri) throw new Error('MONGODB_URI is not set');
  mongoose.set('strictQuery', true);
  // Mongoose otherwise captures `new Error().stack` on every query (to tell where a query executed
  // twice was first run); with source maps on, formatting it was ~5% of a key listing's CPU.
  mongoose.set('skipOriginalStackTraces', true);
  await mongoose.connect(uri, { serverSelectionTimeoutMS: 10_000, maxPoolSize: 50, monitorCommands: true });
  watchCommands();
  connected = true;
  await ensureIndexes();
}

/** Creates the indexes of every registered model (idempotent; models imported late call it again). */
async function ensureIndexes(): Promise<void> {
  await Promise.all(Object.values(mongoose.models).map((m) => m.createIndexes()));
}

export async function disconnectDb(): Promise<void> {
  if (!connected) return;
  connected = false;
  await mongoose.disconnect();
}
