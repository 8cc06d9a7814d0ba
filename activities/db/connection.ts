/**
 * The one database connection of a process (mongoose's default connection). Every store's models
 * are registered on it when their module is imported, so indexes are created for all of them at
 * connect time: unique indexes back every idempotency promise and every slot, so they must exist
 * before the first request.
 */
import mongoose from 'mongoose';

let connected = false;

export async function connectDb(uri: string): Promise<void> {
  if (connected) return;
  if (!uri) throw new Error('MONGODB_URI is not set');
  mongoose.set('strictQuery', true);
  await mongoose.connect(uri, { serverSelectionTimeoutMS: 10_000, maxPoolSize: 50 });
  connected = true;
  await ensureIndexes();
}

/** Creates the indexes of every registered model (idempotent; models imported late call it again). */
export async function ensureIndexes(): Promise<void> {
  await Promise.all(Object.values(mongoose.models).map((m) => m.createIndexes()));
}

export async function disconnectDb(): Promise<void> {
  if (!connected) return;
  connected = false;
  await mongoose.disconnect();
}
