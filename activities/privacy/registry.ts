/**
 * What the privacy runs call: each component's part of a user's data (registered by the
 * composition root, workers/root.ts, in the order erasures run them) and the starts of the two
 * durable runs, handed in because a component holds no Temporal client.
 */
import type { UserData } from '../core/user-data.ts';
import { handedIn } from '../core/wiring.ts';
import type { Requester } from './constants.ts';

const parts = new Map<string, UserData>();

/** `name` names the component in the export (`<name>.json`, `files/<name>/`) and in an erasure's steps. */
export function registerUserData(name: string, part: UserData): void {
  if (!/^[a-z][a-z0-9_-]{0,31}$/.test(name)) throw new Error(`privacy: bad part name ${name}`);
  parts.set(name, part);
}

export const userDataParts = (): string[] => [...parts.keys()];

export function userDataPart(name: string): UserData {
  const part = parts.get(name);
  if (!part) throw new Error(`privacy: no part named ${name} (workers/root.ts registers them)`);
  return part;
}

export interface PrivacyOwner {
  organization_id: string;
  user_id: string;
}

export interface PrivacyRuns {
  /** starts `user-export:<export_id>` (once) */
  startExport(export_id: string, owner: PrivacyOwner): Promise<void>;
  /** starts `user-erasure:<key>` (once per user, ever) */
  startErasure(key: string, owner: PrivacyOwner, by: Requester): Promise<void>;
  /** terminates the user's runs still open (but a redemption's, which settles money, and privacy's own); answers how many */
  stopUserRuns(owner: PrivacyOwner): Promise<number>;
  /** deletes the user's ended runs from Temporal (their inputs and histories), privacy's own excepted; answers how many */
  purgeUserRuns(owner: PrivacyOwner): Promise<number>;
}

const runs = handedIn<PrivacyRuns>("privacy's runs");

export function configurePrivacy(deps: { runs: PrivacyRuns }): void {
  runs.set(deps.runs);
}

export const privacyRuns = (): PrivacyRuns => runs.get();
