/**
 * A user's export and erasure in the assistant's components (llm, text, responses, search,
 * email, idempotency), called in process on data two users of one business organization made
 * over HTTP: A's export holds A's records and stored texts (byte for byte) and nothing of B's;
 * after A's erasure nothing of A is readable through the routes or left in MinIO, B is untouched,
 * the kept records (model call attempts, configuration history) name the tombstone, and a second
 * erasure changes nothing.
 *
 * The text agent's embeddings go to a local HTTP server standing in for an OpenAI-compatible
 * embeddings endpoint (the provider configuration of the `text` agent is global: this file sets
 * it, no other file configures that agent), so the texts' calls go through the LLM gateway and
 * leave attempts and token holds.
 */
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { getObject, removeObject } from '../../activities/adapters/storage.ts';
import { runtime } from '../../activities/core/runtime.ts';
import type { ErasureScope, ExportPart, UserData } from '../../activities/core/user-data.ts';
import { emailUserData } from '../../activities/email/index.ts';
import { idempotencyUserData } from '../../activities/idempotency/index.ts';
import { llmUserData } from '../../activities/llm/index.ts';
import { deleteMeterKey } from '../../activities/llm/store.ts';
import { responsesUserData } from '../../activities/responses/index.ts';
import { searchUserData } from '../../activities/search/index.ts';
import { storeText, textUserData } from '../../activities/text/index.ts';
import { freePort } from '../../tools/infra.ts';
import { adminKey, basicUser, call, fileForm, newTenant, type Tenant, unique } from '../helpers/api.ts';
import { useSuiteRuntime } from '../helpers/runtime.ts';

useSuiteRuntime();

const P = '/api/llm-config';
const PARTS: Record<string, UserData> = {
  llm: llmUserData,
  text: textUserData,
  responses: responsesUserData,
  search: searchUserData,
  email: emailUserData,
  idempotency: idempotencyUserData,
};

let standin: http.Server;
let base: string;

/** A deterministic 8-dimension vector of the text (the stand-in's embedding). */
const vectorOf = (text: string) =>
  [...createHash('sha256').update(text).digest()].slice(0, 8).map((b) => (b - 128) / 128);

beforeAll(async () => {
  standin = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}');
      const input = String(Array.isArray(body.input) ? body.input[0] : (body.input ?? ''));
      const tokens = Math.ceil(input.length / 4);
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({
          object: 'list',
          model: body.model,
          data: [{ object: 'embedding', index: 0, embedding: vectorOf(input) }],
          usage: { prompt_tokens: tokens, total_tokens: tokens },
        }),
      );
    });
  });
  const port = await freePort();
  await new Promise<void>((r) => standin.listen(port, '127.0.0.1', r));
  base = `http://127.0.0.1:${port}`;
  const res = await call('POST', `${P}/update-provider-config`, {
    key: adminKey(),
    json: {
      agent_name: 'text',
      config_json: { provider: 'standin-privacy', base_url: `${base}/v1`, api_key: 'sk-standin-privacy-000' },
    },
  });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
});
afterAll(async () => {
  await new Promise<void>((r) => standin.close(() => r()));
});

interface Person {
  key: string;
  user_id: string;
  idp_id: string;
  email: string;
  conversation_id: string;
  texts: Array<{ text: string; file_path: string; embedding_id: string }>;
  thumbnailKey: string;
}

const fixture = (name: string) => fs.readFileSync(new URL(`../fixtures/${name}`, import.meta.url));

async function exportAll(scope: ErasureScope): Promise<Record<string, ExportPart>> {
  const out: Record<string, ExportPart> = {};
  for (const [name, part] of Object.entries(PARTS)) out[name] = await part.export(scope);
  return out;
}

async function eraseAll(scope: ErasureScope): Promise<Record<string, Record<string, number>>> {
  const out: Record<string, Record<string, number>> = {};
  for (const [name, part] of Object.entries(PARTS)) out[name] = await part.erase(scope);
  return out;
}

async function statFails(key: string): Promise<boolean> {
  const { minio, minioSettings } = runtime();
  return minio.statObject(minioSettings.bucket, key).then(
    () => false,
    () => true,
  );
}

/** Every record id-like string of an export, to look for another user's in it. */
const text = (v: unknown) => JSON.stringify(v);

describe('the assistant components: export and erasure of one user', () => {
  let t: Tenant;
  let a: Person;
  let b: Person;
  let scopeA: ErasureScope;
  let scopeB: ErasureScope;
  let exportedA: Record<string, ExportPart>;
  let exportedB: Record<string, ExportPart>;

  async function person(label: string): Promise<Person> {
    const u = await basicUser(t, unique(label));
    const email = `${unique(label)}@example.com`;
    expect(
      (await call('POST', '/api/users', { key: t.adminKey, json: { idp_id: u.idp_id, email } })).status,
    ).toBeLessThan(300);
    // tokens for the text agent's embeddings (the gateway holds them against the user's balance)
    const pkg = await call('POST', '/api/billing/packages', {
      key: adminKey(),
      json: { name: unique('pkg'), tokens: 100_000, price: 1, currency: 'USD', validity_days: 30 },
    });
    const bought = await call('POST', '/api/billing/purchase-tokens', {
      key: u.key,
      json: {
        user_id: u.user_id,
        package_id: pkg.body.package.id,
        payment_method: { type: 'card', token: 'pm_card_visa' },
      },
    });
    expect(bought.status, JSON.stringify(bought.body)).toBe(200);
    const session = await call('POST', '/initialize_session', { key: u.key, json: { user_id: u.user_id } });
    expect(session.status, JSON.stringify(session.body)).toBe(200);
    return { ...u, email, conversation_id: session.body.conversation_id, texts: [], thumbnailKey: unique('thumb') };
  }

  async function seed(p: Person, words: string[]) {
    for (const w of words) {
      const body = `${w}: my ${p.idp_id} pizza order was late, write to ${p.email}.`;
      const res = await call('POST', '/process_text', {
        key: p.key,
        json: { text: body, user_id: p.user_id, conversation_id: p.conversation_id },
      });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      expect(res.body.metadata.embedding.engine).toBe('llm:emb-privacy');
      p.texts.push({ text: body, file_path: res.body.file_path, embedding_id: res.body.embedding_id });
    }
    const search = await call('POST', '/carina/search', {
      key: p.key,
      json: { idp_id: p.idp_id, query: 'pizza order' },
    });
    expect(search.status, JSON.stringify(search.body)).toBe(200);
    const mail = await call('POST', '/email/send', {
      key: p.key,
      json: {
        user_id: p.user_id,
        conversation_id: p.conversation_id,
        email_type: 'notification',
        metadata: { template: 'points_awarded', points: 5, balance: 10 },
      },
    });
    expect(mail.status, JSON.stringify(mail.body)).toBe(200);
    const thumb = await call('POST', '/generate_thumbnail', {
      key: p.key,
      headers: { 'Idempotency-Key': p.thumbnailKey },
      form: fileForm({}, { data: fixture('photo.jpg'), name: 'photo.jpg' }),
    });
    expect(thumb.status, thumb.raw.toString('utf8').slice(0, 200)).toBe(200);
  }

  beforeAll(async () => {
    t = await newTenant('business');
    a = await person('priv-a');
    b = await person('priv-b');
    // A is also an administrator: A's change of the text agent's settings names A in the history.
    const aAdmin = await call('POST', '/generate_api_key', {
      key: t.adminKey,
      json: { user_id: a.idp_id, permissions: ['admin'] },
    });
    expect(aAdmin.status, JSON.stringify(aAdmin.body)).toBe(200);
    const set = await call('POST', `${P}/update-llm-config`, {
      key: aAdmin.body.api_key,
      json: { agent_name: 'text', config_json: { provider: 'standin-privacy', model: 'emb-privacy' } },
    });
    expect(set.status, JSON.stringify(set.body)).toBe(200);
    await seed(a, ['first', 'second']);
    await seed(b, ['third']);
    scopeA = {
      organization_id: t.organization_id,
      user_id: a.user_id,
      idp_id: a.idp_id,
      tombstone: unique('del_test'),
    };
    scopeB = {
      organization_id: t.organization_id,
      user_id: b.user_id,
      idp_id: b.idp_id,
      tombstone: unique('del_test'),
    };
  });

  it("exports A's records and stored texts, JSON-safe, and nothing of B's", async () => {
    exportedA = await exportAll(scopeA);
    exportedB = await exportAll(scopeB);
    expect(JSON.parse(JSON.stringify(exportedA))).toEqual(exportedA);
    const all = text(exportedA);
    for (const leak of [
      b.user_id,
      b.idp_id,
      b.email,
      b.conversation_id,
      ...b.texts.map((x) => x.embedding_id),
      b.thumbnailKey,
    ])
      expect(all).not.toContain(leak);
    expect(all).not.toContain('sk-standin-privacy');

    // text: two texts, each stored object byte for byte
    const tx = exportedA.text;
    expect(tx.data.texts.map((x: any) => x.embedding_id).sort()).toEqual(a.texts.map((x) => x.embedding_id).sort());
    expect(tx.files.map((f) => f.key).sort()).toEqual(a.texts.map((x) => x.file_path).sort());
    for (const f of tx.files) {
      expect(f.name).toMatch(/^texts\/txt_[\w-]+\.txt$/);
      const original = a.texts.find((x) => x.file_path === f.key)!;
      expect((await getObject(f.key))!.equals(Buffer.from(original.text, 'utf8'))).toBe(true);
    }

    // responses: the two texts' normalized responses
    expect(exportedA.responses.data.normalized_responses).toHaveLength(2);
    expect(
      exportedA.responses.data.normalized_responses.every(
        (r: any) => r.conversation_id === a.conversation_id && r.source === 'text',
      ),
    ).toBe(true);

    // search: the recorded query
    expect(exportedA.search.data.search_history).toMatchObject([{ query: 'pizza order' }]);
    expect(text(exportedA.search.data.search_history)).toContain(a.texts[0].embedding_id);

    // email: the message and the hour's count
    expect(exportedA.email.data.emails_sent).toMatchObject([
      { recipient: a.email, email_type: 'notification', subject: 'You earned 5 points' },
    ]);
    expect(exportedA.email.data.hourly_send_counts).toMatchObject([{ sends: 1 }]);

    // idempotency: the thumbnail's key
    expect(exportedA.idempotency.data.idempotency_keys).toMatchObject([
      { route: 'generate_thumbnail', key: a.thumbnailKey, state: 'succeeded' },
    ]);

    // llm: the embeddings' attempts, the token holds, A's configuration change
    const llm = exportedA.llm.data;
    expect(llm.model_calls).toHaveLength(2);
    expect(llm.model_calls.every((c: any) => c.agent === 'text' && c.outcome === 'ok' && c.tokens > 0)).toBe(true);
    expect(llm.token_holds.length).toBeGreaterThanOrEqual(4); // a hold and its settling per call
    expect(llm.configuration_changes).toMatchObject([{ scope: `org:${t.organization_id}:text`, version: 1 }]);
    expect(llm.configurations_last_written).toMatchObject([{ id: `${t.organization_id}|text` }]);
    const bCalls = new Set(exportedB.llm.data.model_calls.map((c: any) => c.call_id));
    expect(llm.model_calls.some((c: any) => bCalls.has(c.call_id))).toBe(false);
    expect(exportedB.llm.data.configuration_changes).toEqual([]);
  });

  it('erases A: nothing of A through the routes or in MinIO, B untouched, the kept records tombstoned', async () => {
    const before = await call('GET', `${P}/attempts?agent_name=text&limit=50`, { key: t.adminKey });
    const aCalls = before.body.attempts.filter((x: any) => x.user_id === a.user_id).map((x: any) => x.call_id);
    expect(aCalls).toHaveLength(2);

    const report = await eraseAll(scopeA);
    expect(report).toEqual({
      llm: {
        token_holds_deleted: exportedA.llm.data.token_holds.length,
        attempts_tombstoned: 2,
        config_versions_tombstoned: 1,
        configs_tombstoned: 1,
      },
      text: { objects_deleted: 2, embeddings_deleted: 2 },
      responses: { responses_deleted: 2 },
      search: { search_entries_deleted: 1 },
      email: {
        emails_deleted: 1,
        outbox_files_deleted: 0,
        send_counters_deleted: 2,
        suppressed_addresses_forgotten: 0,
      },
      idempotency: { idempotency_keys_deleted: 1 },
    });

    // text: the objects are gone, the embeddings answer nothing
    for (const x of a.texts) expect(await statFails(x.file_path)).toBe(true);
    const byEmbedding = await call('POST', '/text/similar', {
      key: t.adminKey,
      json: { embedding_id: a.texts[0].embedding_id },
    });
    expect(byEmbedding.status).toBe(404);
    const similar = await call('POST', '/text/similar', {
      key: t.adminKey,
      json: { embedding_id: b.texts[0].embedding_id, limit: 50 },
    });
    expect(similar.status, JSON.stringify(similar.body)).toBe(200);
    expect(similar.body.results.some((r: any) => r.user_id === a.user_id)).toBe(false);
    // responses
    expect(
      (await call('GET', `/get_response/${a.conversation_id}?user_id=${a.user_id}`, { key: t.adminKey })).status,
    ).toBe(404);
    expect(
      (await call('GET', `/get_response/${b.conversation_id}?user_id=${b.user_id}`, { key: t.adminKey })).status,
    ).toBe(200);
    // search
    const history = await call(
      'GET',
      `/carina/search-results?idp_id=${a.idp_id}&organization_id=${t.organization_id}`,
      { key: t.adminKey },
    );
    expect(history.body).toEqual([]);
    // llm: the attempts stay, naming the tombstone; the history names the tombstone
    const after = await call('GET', `${P}/attempts?agent_name=text&limit=50`, { key: t.adminKey });
    expect(after.body.total).toBe(before.body.total);
    expect(after.body.attempts.some((x: any) => x.user_id === a.user_id)).toBe(false);
    expect(after.body.attempts.filter((x: any) => aCalls.includes(x.call_id)).map((x: any) => x.user_id)).toEqual([
      scopeA.tombstone,
      scopeA.tombstone,
    ]);
    const versions = await call('GET', `${P}/history?agent_name=text`, { key: t.adminKey });
    expect(versions.status, JSON.stringify(versions.body)).toBe(200);
    expect(versions.body.versions.map((v: any) => v.changed_by)).toEqual([scopeA.tombstone]);
    expect(text(versions.body)).not.toContain(a.user_id);

    // A's export is now empty, B's is as it was
    const emptied = await exportAll(scopeA);
    for (const [name, part] of Object.entries(emptied)) {
      expect(part.files, name).toEqual([]);
      for (const [records, list] of Object.entries(part.data)) expect(list, `${name}.${records}`).toEqual([]);
    }
    expect(await exportAll(scopeB)).toEqual(exportedB);
    for (const f of exportedB.text.files) expect(await statFails(f.key)).toBe(false);
  });

  it('a second erasure changes nothing and does not throw', async () => {
    const again = await eraseAll(scopeA);
    for (const [name, counts] of Object.entries(again))
      for (const [what, n] of Object.entries(counts)) expect(n, `${name}.${what}`).toBe(0);
    expect(await exportAll(scopeB)).toEqual(exportedB);
    // The erased key answers no more: the same Idempotency-Key starts a new run instead of replaying A's.
    const replay = await call('POST', '/generate_thumbnail', {
      key: a.key,
      headers: { 'Idempotency-Key': a.thumbnailKey },
      form: fileForm({}, { data: fixture('photo.jpg'), name: 'photo.jpg' }),
    });
    expect(replay.status).toBe(200);
    expect(replay.headers.get('idempotent-replayed')).toBeNull();
    const bReplay = await call('POST', '/generate_thumbnail', {
      key: b.key,
      headers: { 'Idempotency-Key': b.thumbnailKey },
      form: fileForm({}, { data: fixture('photo.jpg'), name: 'photo.jpg' }),
    });
    expect(bReplay.headers.get('idempotent-replayed')).toBe('true');
  });

  it('finishes an erasure a crash interrupted, and finds a text stored before its workflow ran', async () => {
    const c = await person('priv-c');
    await seed(c, ['fourth', 'fifth']);
    // a text whose workflow never ran: its object, no embedding
    const orphan = await storeText({ organization_id: t.organization_id, user_id: c.user_id, text: 'never processed' });
    const scopeC: ErasureScope = {
      organization_id: t.organization_id,
      user_id: c.user_id,
      idp_id: c.idp_id,
      tombstone: unique('del_test'),
    };
    const exported = await textUserData.export(scopeC);
    expect(exported.files.map((f) => f.key).sort()).toEqual(
      [...c.texts.map((x) => x.file_path), orphan.file_path].sort(),
    );
    // The first erasure died after removing one object: the second removes the rest and the embeddings.
    await removeObject(c.texts[0].file_path);
    expect(await textUserData.erase(scopeC)).toEqual({ objects_deleted: 2, embeddings_deleted: 2 });
    for (const key of [...c.texts.map((x) => x.file_path), orphan.file_path]) expect(await statFails(key)).toBe(true);
    // The first erasure of llm died after the holds: the second tombstones the attempts.
    const llmBefore = await llmUserData.export(scopeC);
    expect(llmBefore.data.model_calls).toHaveLength(2);
    expect(llmBefore.data.token_holds.length).toBeGreaterThan(0);
    expect(await deleteMeterKey('balance', `${t.organization_id}|${c.user_id}`)).toBe(
      llmBefore.data.token_holds.length,
    );
    expect(await llmUserData.erase(scopeC)).toEqual({
      token_holds_deleted: 0,
      attempts_tombstoned: 2,
      config_versions_tombstoned: 0,
      configs_tombstoned: 0,
    });
    expect(await llmUserData.erase(scopeC)).toEqual({
      token_holds_deleted: 0,
      attempts_tombstoned: 0,
      config_versions_tombstoned: 0,
      configs_tombstoned: 0,
    });
    expect(await exportAll(scopeB)).toEqual(exportedB);
  });
});
