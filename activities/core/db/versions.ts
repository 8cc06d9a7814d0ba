/**
 * What a process keeps in memory for an organization, built from the store (the venues of the
 * cells it searched, a support index), kept until the organization's version of it moves. Every
 * write of what it was built from moves the version (`move`); every process reads it again at
 * most once per POLL_MS, in the background (one `_id` read per organization and second, never one
 * per request), and hears of a move through `onMove`. What one process wrote is thus seen by the
 * others about a second later. One collection, `memory_versions`, keyed `<subject>|<organization>`.
 */
import mongoose, { Schema } from 'mongoose';
const POLL_MS = 1000;

const MemoryVersion = mongoose.model<{ _id: string; v: number }>(
  'MemoryVersion',
  new Schema({ _id: { type: String, required: true }, v: { type: Number, required: true } }, { versionKey: false }),
  'memory_versions',
);

interface Seen {
  version: number | undefined;
  checked: number;
  reading?: Promise<void>;
}

export interface Versions {
  /** Reads the version now (0 before the first move) and takes it as the one this process has seen. */
  current(organization_id: string): Promise<number>;
  /**
   * Reads the version again when last read over POLL_MS ago, in the background, calling `onMove`
   * (awaited within the read) when it differs from the one last seen (or none was). Answers the
   * read to wait for when this process has no recent version (never read, or not for twice
   * POLL_MS), else undefined.
   */
  heed(organization_id: string): Promise<void> | undefined;
  /** This process wrote what the organization's memory is built from: moves the version for everyone. */
  move(organization_id: string): Promise<void>;
}

export function versionsOf(
  subject: string,
  onMove: (organization_id: string, version: number) => void | Promise<void>,
): Versions {
  // One small entry per organization this process served; never evicted, so a move is never missed.
  const seen = new Map<string, Seen>();
  const key = (organization_id: string) => `${subject}|${organization_id}`;
  const stateOf = (organization_id: string) => {
    let s = seen.get(organization_id);
    if (!s) seen.set(organization_id, (s = { version: undefined, checked: 0 }));
    return s;
  };
  const read = async (organization_id: string) =>
    (await MemoryVersion.findById(key(organization_id)).lean<{ v: number }>())?.v ?? 0;
  return {
    async current(organization_id) {
      const s = stateOf(organization_id);
      const v = await read(organization_id);
      Object.assign(s, { version: v, checked: Date.now() });
      return v;
    },
    heed(organization_id) {
      const s = stateOf(organization_id);
      const now = Date.now();
      if (!s.reading && now - s.checked >= POLL_MS) {
        // The version is taken as seen only once onMove has dealt with it (a failed rebuild is
        // tried again at the next read). The first one read counts as a move too: what was kept
        // while the store could not be read goes then.
        s.reading = read(organization_id)
          .then(async (v) => {
            if (v !== s.version) await onMove(organization_id, v);
            s.version = v;
          })
          .catch(() => undefined)
          .finally(() => {
            s.checked = now;
            s.reading = undefined;
          });
      }
      return s.version === undefined || now - s.checked > 2 * POLL_MS ? s.reading : undefined;
    },
    async move(organization_id) {
      await MemoryVersion.updateOne({ _id: key(organization_id) }, { $inc: { v: 1 } }, { upsert: true });
    },
  };
}
