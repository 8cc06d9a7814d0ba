/**
 * MAX_KEYS_PER_USER against rotation: every key that still authenticates (a rotated key in its
 * grace included) holds a place, so a basic key cannot grow its user's working keys (each with
 * its own per-key budget) past the cap by rotating with a long grace and revoking the successor.
 */
import { describe, expect, inject, it } from 'vitest';

import { basicUser, call, newTenant } from '../helpers/api.ts';

const keyCap = () => Number((inject('platformEnv') as Record<string, string | undefined>).MAX_KEYS_PER_USER ?? 10);
const sleepUntil = (t: number) => new Promise((r) => setTimeout(r, Math.max(0, t - Date.now())));
const verify = (api_key: string) => call('POST', '/verify_api_key', { json: { api_key } });
const generate = (key: string, user_id: string) => call('POST', '/generate_api_key', { key, json: { user_id } });
const rotate = (key: string, key_id: string, grace_seconds: number) =>
  call('POST', '/rotate_api_key', { key, json: { key_id, grace_seconds } });
const revoke = (key: string, user_id: string, api_key: string) =>
  call('POST', '/revoke_api_key', { key, json: { user_id, api_key } });

/** The user's keys that authenticate now, by the list's own `active` (active or in a grace). */
async function working(user_id: string, key: string): Promise<string[]> {
  const res = await call('GET', `/list_api_keys/${user_id}`, { key });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body.api_keys.filter((k: { active: boolean }) => k.active).map((k: { key_id: string }) => k.key_id);
}

/** A basic user filled up to the cap with its own key: its first key and the key_ids of all. */
async function fullUser() {
  const t = await newTenant();
  const u = await basicUser(t);
  const ids = await working(u.user_id, u.key);
  const keys: { key: string; key_id: string }[] = [];
  for (let i = 1; i < keyCap(); i += 1) {
    const res = await generate(u.key, u.user_id);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    keys.push({ key: res.body.api_key, key_id: res.body.metadata.key_id });
  }
  return { t, u, first: ids[0], keys };
}

describe('the key cap under rotation', () => {
  it('refuses a rotation with a grace at the cap; revoking the successor frees no place while the old key works', async () => {
    const cap = keyCap();
    const { u, keys } = await fullUser();
    const atCap = await rotate(u.key, keys[0].key_id, 600);
    expect(atCap.status, JSON.stringify(atCap.body)).toBe(409);
    expect(atCap.body.detail).toMatch(/MAX_KEYS_PER_USER/);
    expect((await verify(keys[0].key)).body.valid).toBe(true); // refused rotation changed nothing
    expect(await working(u.user_id, u.key)).toHaveLength(cap);

    // With a free place the rotation goes through; the successor takes that place.
    expect((await revoke(u.key, u.user_id, keys[1].key_id)).status).toBe(200);
    const rot = await rotate(u.key, keys[0].key_id, 600);
    expect(rot.status, JSON.stringify(rot.body)).toBe(200);
    expect((await generate(u.key, u.user_id)).status).toBe(409);
    // The attack: revoke the successor. The old key still works, so its place stays taken.
    expect((await revoke(u.key, u.user_id, rot.body.metadata.key_id)).status).toBe(200);
    expect((await verify(keys[0].key)).body.valid).toBe(true);
    const again = await generate(u.key, u.user_id);
    expect(again.status, JSON.stringify(again.body)).toBe(200); // the successor's place, not a new one
    expect((await generate(u.key, u.user_id)).status).toBe(409);
    expect((await working(u.user_id, u.key)).length).toBe(cap);
  });

  it('lets a rotation without grace replace the old key at the cap, and frees a place when a grace ends', async () => {
    const cap = keyCap();
    const { u, keys } = await fullUser();
    const rot = await rotate(u.key, keys[0].key_id, 0);
    expect(rot.status, JSON.stringify(rot.body)).toBe(200);
    expect(rot.body.previous.status).toBe('expired');
    expect((await verify(keys[0].key)).body).toEqual({ valid: false, reason: 'expired' });
    expect((await generate(u.key, u.user_id)).status).toBe(409);

    // Rotating a successor hands its predecessor's place on (the predecessor stops at once).
    expect((await revoke(u.key, u.user_id, keys[1].key_id)).status).toBe(200);
    const r1 = await rotate(u.key, keys[2].key_id, 600);
    expect(r1.status).toBe(200);
    const r2 = await rotate(u.key, r1.body.metadata.key_id, 600);
    expect(r2.status, JSON.stringify(r2.body)).toBe(200);
    expect((await verify(keys[2].key)).body).toEqual({ valid: false, reason: 'expired' });
    expect((await working(u.user_id, u.key)).length).toBe(cap);

    // A short grace: its place frees once the old key stops working.
    const r3 = await rotate(u.key, r2.body.metadata.key_id, 2);
    expect(r3.status, JSON.stringify(r3.body)).toBe(200); // r1's place passes to r3
    const graceEnd = Date.parse(r3.body.previous.expires_at);
    expect((await generate(u.key, u.user_id)).status).toBe(409);
    await sleepUntil(graceEnd + 100);
    expect((await generate(u.key, u.user_id)).status).toBe(200);
    expect((await working(u.user_id, u.key)).length).toBe(cap);
  });

  it('never lets concurrent creations and rotations with a grace exceed the cap', async () => {
    const cap = keyCap();
    const t = await newTenant();
    const u = await basicUser(t);
    const own: string[] = [];
    for (let i = 0; i < 3; i += 1) own.push((await generate(u.key, u.user_id)).body.metadata.key_id);
    // Each of the three keys rotated twice at once (one of each pair is 409), and creations.
    const calls = [...own, ...own].map((id) => () => rotate(u.key, id, 600));
    for (let i = 0; i < 14; i += 1) calls.push(() => generate(u.key, u.user_id));
    const out = await Promise.all(calls.map((f) => f()));
    expect(
      out.map((r) => r.status).every((s) => s === 200 || s === 409),
      JSON.stringify(out.map((r) => r.body)),
    ).toBe(true);
    expect((await working(u.user_id, u.key)).length).toBeLessThanOrEqual(cap);
    // No place was lost either: filling up one by one ends exactly at the cap.
    for (let i = 0; i < cap && (await generate(u.key, u.user_id)).status === 200; i += 1);
    expect((await working(u.user_id, u.key)).length).toBe(cap);
  });
});
