/**
 * Drill of the supervisor behind `npm start`: a second platform launched by launchPlatform (the
 * suite's servers; its own task queue, bucket, database and data directory) with two workers.
 * A worker is killed with SIGKILL while it runs an upload's workflow task: every request is
 * answered 200, each upload has one thumbnail, one original and one normalized response, the
 * supervisor logs the exit and the restart, and the new process polls the queue. A worker killed
 * while it transcribes a spoken question (an ordinary activity, up to 5 minutes): the answer comes
 * after the heartbeat timeout, not after those 5 minutes. Then the edge.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import { Client, Connection } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { Client as MinioClient } from 'minio';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';

import { minioSettings, parseEnv } from '../../activities/core/config.ts';
import { generateSecret } from '../../activities/identity/api-keys.ts';
import { launchPlatform, type Platform } from '../../tools/platform.ts';
import { unique, until } from '../helpers/api.ts';
import { isolatedPlatformEnv } from '../helpers/runtime.ts';
import { speak } from '../helpers/speech.ts';

const queue = unique('supervision');
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'supervision-drill-'));
const adminKey = generateSecret();
const log: string[] = [];
let platform: Platform;
let client: Client;
let minio: MinioClient;
let bucket: string;
let photo: Buffer;
let user: { key: string; user_id: string; organization_id: string };

async function call(
  method: string,
  route: string,
  key: string,
  body?: unknown,
): Promise<{ status: number; body: any }> {
  const res = await fetch(`${platform.edgeUrl}${route}`, {
    method,
    headers: { authorization: `Bearer ${key}`, ...(body ? { 'content-type': 'application/json' } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  return { status: res.status, body: await res.json() };
}

async function upload(conversation_id: string, i: number) {
  const form = new FormData();
  for (const [k, v] of Object.entries({ user_id: user.user_id, session_id: 'drill', conversation_id }))
    form.append(k, v);
  form.append('file', new Blob([photo], { type: 'image/jpeg' }), `${conversation_id}-${i}.jpg`);
  const began = Date.now();
  // Each upload carries its Idempotency-Key, as a client that may lose its answer would.
  const headers = { authorization: `Bearer ${user.key}`, 'idempotency-key': `${conversation_id}-${i}` };
  const res = await fetch(`${platform.edgeUrl}/process_image`, { method: 'POST', headers, body: form });
  return {
    status: res.status,
    body: (await res.json()) as any,
    ms: Date.now() - began,
    replayed: res.headers.get('idempotent-replayed') === 'true',
  };
}

/** pid@host of the workers Temporal saw polling the drill's queue (workflow side). */
async function pollers(): Promise<string[]> {
  const res = await client.connection.workflowService.describeTaskQueue({
    namespace: client.options.namespace,
    taskQueue: { name: queue, kind: 1 },
    taskQueueType: 1,
  });
  return (res.pollers ?? []).map((p) => p.identity!);
}

const history = async (workflowId: string) => (await client.workflow.getHandle(workflowId).fetchHistory()).events ?? [];
const workerPids = () => platform.processes.filter((p) => p.name.startsWith('worker')).map((p) => p.current().pid!);
const polls = (ids: string[], pid: number) => ids.some((id) => id.startsWith(`${pid}@`));

async function objects(prefix: string): Promise<string[]> {
  const names: string[] = [];
  for await (const o of minio.listObjectsV2(bucket, prefix, true)) names.push((o as { name: string }).name);
  return names.sort();
}

beforeAll(async () => {
  const suite = inject('platformEnv');
  const env = isolatedPlatformEnv({ queue, dataDir, adminKey }, { WORKER_COUNT: '2', MAX_UPLOAD_MB: '25' });
  const cfg = parseEnv({ ...process.env, ...env });
  platform = await launchPlatform({ cfg, freePorts: true, env, stdio: 'ignore', log: (line) => log.push(line) });
  client = new Client({
    connection: await Connection.connect({ address: suite.TEMPORAL_ADDRESS }),
    namespace: cfg.TEMPORAL_NAMESPACE,
  });
  const settings = minioSettings(cfg);
  minio = new MinioClient(settings);
  bucket = settings.bucket;
  // A photo large enough that its thumbnail keeps a worker busy for a moment.
  photo = await sharp({
    create: {
      width: 2400,
      height: 1800,
      channels: 3,
      background: '#808080',
      noise: { type: 'gaussian', mean: 128, sigma: 40 },
    },
  })
    .jpeg({ quality: 85 })
    .toBuffer();
  const org = await call('POST', '/api/organizations', adminKey, { name: unique('Drill'), tier: 'free' });
  const organization_id = org.body.organization.organization_id as string;
  const key = await call('POST', '/generate_api_key', adminKey, { user_id: unique('ana'), organization_id });
  user = { key: key.body.api_key, user_id: key.body.metadata.user_id, organization_id };
}, 300_000);

afterAll(async () => {
  await platform?.stop();
  await client?.connection.close();
  fs.rmSync(dataDir, { recursive: true, force: true });
});

describe('supervision drill', () => {
  it('runs WORKER_COUNT workers on one task queue, and both take work', async () => {
    const pids = workerPids();
    expect(pids).toHaveLength(2);
    await until('both workers polling', pollers, (ids) => pids.every((pid) => polls(ids, pid)), 180_000);
    const answers = await Promise.all(Array.from({ length: 8 }, (_, i) => upload('warm-up', i)));
    expect(answers.map((a) => a.status)).toEqual(Array(8).fill(200));
    const identities = new Set<string>();
    for (const a of answers) {
      for (const e of (await history(a.body.metadata.workflow_id)).filter(
        (e) => e.workflowTaskCompletedEventAttributes,
      ))
        identities.add(e.workflowTaskCompletedEventAttributes!.identity!);
    }
    for (const pid of pids)
      expect(
        [...identities].some((id) => id.startsWith(`${pid}@`)),
        `worker ${pid} completed none of ${[...identities]}`,
      ).toBe(true);
    expect([...identities].every((id) => pids.some((pid) => id.startsWith(`${pid}@`)))).toBe(true);
  }, 240_000);

  it('answers every upload when a worker is killed mid-task, doubles nothing, and the worker comes back', async () => {
    const worker = platform.processes.find((p) => p.name === 'worker 1')!;
    const victim = worker.current().pid!;
    const conversation = unique('drill');
    const n = 16;
    const inFlight = Promise.all(Array.from({ length: n }, (_, i) => upload(conversation, i)));

    // Kill the worker while it holds a workflow task of one of these uploads (its local
    // activities, the thumbnail, are running inside that task).
    const held = await until(
      'a workflow task held by the victim',
      async () => {
        for await (const wf of client.workflow.list({
          query: `TaskQueue = "${queue}" AND ExecutionStatus = "Running"`,
        })) {
          const events = await history(wf.workflowId);
          const last = events[events.length - 1];
          if (last?.workflowTaskStartedEventAttributes?.identity?.startsWith(`${victim}@`)) return wf.workflowId;
        }
        return '';
      },
      (id) => id !== '',
      60_000,
    );
    process.kill(victim, 'SIGKILL');
    const answers = await inFlight;

    expect(answers.map((a) => a.status)).toEqual(Array(n).fill(200));
    const workflowIds = answers.map((a) => a.body.metadata.workflow_id as string);
    expect(workflowIds).toContain(held);
    // Tasks the victim held timed out and were taken over: their answers waited, nothing else.
    const timedOut: string[] = [];
    for (const id of workflowIds)
      if ((await history(id)).some((e) => e.workflowTaskTimedOutEventAttributes)) timedOut.push(id);
    expect(timedOut.length).toBeGreaterThan(0);
    const slowest = Math.max(...answers.map((a) => a.ms));
    const ms = (ids: string[]) => ids.map((id) => answers[workflowIds.indexOf(id)].ms).sort((x, y) => x - y);
    const others = workflowIds.filter((id) => !timedOut.includes(id));
    process.stderr.write(
      `supervision drill: ${n} uploads answered; taken over from the killed worker: ${timedOut.length}, answered in ${ms(timedOut).join(', ')} ms; the others in ${ms(others).join(', ')} ms\n`,
    );
    expect(slowest).toBeLessThan(30_000);

    // A client that lost its answer sends the same upload again with its key: the first result,
    // nothing new started or stored (the one whose task was taken over included).
    const retried = await Promise.all([workflowIds.indexOf(held), 0, n - 1].map((i) => upload(conversation, i)));
    for (const r of retried) {
      expect(r).toMatchObject({ status: 200, replayed: true });
      expect(answers.map((a) => a.body.metadata.workflow_id)).toContain(r.body.metadata.workflow_id);
    }
    expect(retried[0].body).toEqual(answers[workflowIds.indexOf(held)].body);

    // Nothing doubled: one original, one thumbnail and one normalized response per upload.
    expect(new Set(workflowIds).size).toBe(n);
    const prefix = `${user.organization_id}/${user.user_id}`;
    const thumbnails = answers.map((a) => a.body.thumbnail_path as string);
    const originals = answers.map((a) => a.body.data.original_path as string);
    const ofThisRound = (names: string[]) => names.filter((name) => name.includes(`${conversation}-`));
    const storedOriginals = ofThisRound(await objects(`${prefix}/originals/`));
    expect(storedOriginals).toEqual([...originals].sort());
    // Thumbnails are named by the media id alone (`<media_id>.jpg`): those of this round's originals.
    const mediaIds = storedOriginals.map((name) => name.split('/').pop()!.split('-')[0]);
    expect(
      (await objects(`${prefix}/thumbnails/`)).filter((name) => mediaIds.some((id) => name.endsWith(`/${id}.jpg`))),
    ).toEqual([...thumbnails].sort());
    const stored = await call('GET', `/get_response/${conversation}?user_id=${user.user_id}`, user.key);
    expect(stored.status).toBe(200);
    expect(stored.body.responses.map((r: { response_id: string }) => r.response_id).sort()).toEqual(
      [...workflowIds].sort(),
    );

    // The supervisor logged the exit and the restart, and the new process polls the queue.
    const replacement = worker.current().pid!;
    expect(replacement).not.toBe(victim);
    expect(log).toContainEqual(
      expect.stringMatching(
        new RegExp(`^worker 1 \\(pid ${victim}\\) exited \\(SIGKILL\\) after [0-9.]+ s; restarting in 0.5 s$`),
      ),
    );
    expect(log).toContain(`worker 1 restarted (pid ${replacement})`);
    await until('the restarted worker polling', pollers, (ids) => polls(ids, replacement), 180_000);
    const ready = await fetch(`${platform.edgeUrl}/health/ready`);
    expect(ready.status).toBe(200);
  }, 300_000);

  it('answers a spoken question whose transcribing worker is killed after the heartbeat timeout, not the activity limit', async () => {
    await until('both workers polling', pollers, (ids) => workerPids().every((pid) => polls(ids, pid)), 180_000);
    const session = await call('POST', '/initialize_session', user.key, { user_id: user.user_id });
    expect(session.status).toBe(200);
    // About 20 s of speech: its transcription keeps the worker busy for a few seconds.
    const audio = speak(Array(4).fill('i forgot my password and cannot sign in').join(', '));
    const form = new FormData();
    form.append('user_id', user.user_id);
    form.append('conversation_id', session.body.conversation_id);
    form.append('file', new Blob([audio], { type: 'audio/wav' }), 'question.wav');
    const began = Date.now();
    const answer = fetch(`${platform.edgeUrl}/support/transcribe`, {
      method: 'POST',
      headers: { authorization: `Bearer ${user.key}` },
      body: form,
    }).then(async (res) => ({ status: res.status, body: (await res.json()) as any }));

    const { workflowId, identity } = await until(
      'a transcription running on a worker',
      async () => {
        for await (const wf of client.workflow.list({
          query: `TaskQueue = "${queue}" AND WorkflowType = "audioQaWorkflow" AND ExecutionStatus = "Running"`,
        })) {
          const d = await client.workflow.getHandle(wf.workflowId).describe();
          const running = d.raw.pendingActivities?.find(
            (a) => a.activityType?.name === 'transcribeStoredAudio' && a.lastStartedTime && a.lastWorkerIdentity,
          );
          if (running) return { workflowId: wf.workflowId, identity: running.lastWorkerIdentity! };
        }
        return { workflowId: '', identity: '' };
      },
      (r) => r.workflowId !== '',
      120_000,
    );
    const victim = Number(identity.split('@')[0]);
    const killedAt = Date.now();
    process.kill(victim, 'SIGKILL');
    const res = await answer;
    const afterKill = Date.now() - killedAt;
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.text).toContain('password');
    expect(res.body.metadata.workflow_id).toBe(workflowId);
    // The first attempt ended by its heartbeat timeout; the second ran on a live worker.
    const event = (await history(workflowId)).find(
      (e) => e.activityTaskStartedEventAttributes && e.activityTaskStartedEventAttributes.attempt! > 1,
    );
    const started = event?.activityTaskStartedEventAttributes;
    expect(started?.lastFailure?.timeoutFailureInfo?.timeoutType).toBe(
      temporal.api.enums.v1.TimeoutType.TIMEOUT_TYPE_HEARTBEAT,
    );
    expect(started?.identity?.startsWith(`${victim}@`)).toBe(false);
    const retriedAfter =
      Number(event!.eventTime!.seconds) * 1000 + Math.floor((event!.eventTime!.nanos ?? 0) / 1e6) - killedAt;
    process.stderr.write(
      `supervision drill: transcription retried on another worker ${retriedAfter} ms after its worker was killed, answered after ${afterKill} ms (${Date.now() - began} ms in all)\n`,
    );
    // Within the 20 s heartbeat timeout (and the retry's backoff), not the 5-minute limit.
    expect(retriedAfter).toBeLessThan(40_000);
    expect(afterKill).toBeLessThan(150_000);
    expect(log).toContainEqual(
      expect.stringMatching(new RegExp(`^worker \\d \\(pid ${victim}\\) exited \\(SIGKILL\\)`)),
    );
  }, 300_000);

  it('starts the edge again when it is killed', async () => {
    const edge = platform.processes.find((p) => p.name === 'edge')!;
    const victim = edge.current().pid!;
    process.kill(victim, 'SIGKILL');
    await until(
      'the edge answering again',
      async () => (await fetch(`${platform.edgeUrl}/health/ready`)).status,
      (s) => s === 200,
      120_000,
    );
    expect(edge.current().pid).not.toBe(victim);
    expect(log).toContainEqual(expect.stringMatching(new RegExp(`^edge \\(pid ${victim}\\) exited \\(SIGKILL\\)`)));
    expect(log).toContain(`edge restarted (pid ${edge.current().pid})`);
  }, 180_000);
});
