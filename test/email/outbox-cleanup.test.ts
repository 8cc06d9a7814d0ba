/**
 * Mail written to the outbox (DATA_DIR/outbox, when no SMTP_URL is set) holds the recipient and
 * the whole message (issue 35, item 6): a user's erasure removes the files of the user's messages,
 * found by the file name recorded on each mail record (never by reading files), and the hourly
 * retention run removes files older than OUTBOX_RETENTION_DAYS.
 *
 * The suite's platform sends by SMTP; the sends here run the email component's activity in this
 * process with the file transport, against the suite's database. The retention run is the suite's
 * real Schedule, sweeping the worker's DATA_DIR/outbox.
 */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';

import { config, parseEnv, setConfig } from '../../activities/core/config.ts';
import { type EmailRequest, emailUserData, sendEmail } from '../../activities/email/index.ts';
import { recordSent } from '../../activities/email/store.ts';
import { retentionScheduleId } from '../../workers/runs/platform-schedules.ts';
import { basicUser, newTenant, unique, until } from '../helpers/api.ts';
import { useSuiteClients, useSuiteRuntime } from '../helpers/runtime.ts';

useSuiteRuntime();
const suite = useSuiteClients();

const hex = randomBytes(4).toString('hex');
const ADDRESS = `zelda.quux.${hex}@example.com`;
const BODY = `Dear Zelda, your results ${hex} are in.`;

let dataDir: string;
beforeAll(() => {
  // The file transport in this process: no SMTP_URL, an outbox of its own.
  dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'outbox-erasure-'));
  const env: Record<string, string | undefined> = { ...process.env, ...inject('platformEnv'), DATA_DIR: dataDir };
  delete env.SMTP_URL;
  setConfig(parseEnv(env));
});
afterAll(() => fs.rmSync(dataDir, { recursive: true, force: true }));

const outbox = () => path.join(config().dataDir, 'outbox');
const files = () => (fs.existsSync(outbox()) ? fs.readdirSync(outbox()).sort() : []);
const holding = (text: string) => files().filter((f) => fs.readFileSync(path.join(outbox(), f), 'utf8').includes(text));

function mail(organization_id: string, user_id: string, recipient = ADDRESS): EmailRequest {
  return {
    organization_id,
    user_id,
    conversation_id: '-',
    email_type: 'notification',
    metadata: { template: 'generic' },
    recipient,
    idempotency_key: unique('outbox'),
  };
}
const content = { subject: `Results ${hex}`, text: BODY, html: `<p>${BODY}</p>` };

describe("the outbox and a user's erasure", () => {
  it("removes the user's outbox files, found by the names on the mail records, and no one else's", async () => {
    const t = await newTenant();
    const [u, v] = [await basicUser(t), await basicUser(t)];
    const first = mail(t.organization_id, u.user_id);
    const sent = await sendEmail({ req: first, content });
    expect(sent).toMatchObject({ transport: 'file', duplicate: false });
    await sendEmail({ req: mail(t.organization_id, u.user_id), content });
    // A retry of the same message writes no second file.
    expect((await sendEmail({ req: first, content })).duplicate).toBe(true);
    await sendEmail({
      req: mail(t.organization_id, v.user_id, `other.${hex}@example.com`),
      content: { ...content, text: 'for someone else' },
    });
    // A message recorded before file names were recorded: its file is found by its Message-ID in the name.
    const legacyId = `<${randomBytes(12).toString('hex')}@${t.organization_id}.platform>`;
    const legacyFile = `${new Date().toISOString().replace(/[:.]/g, '-')}-${legacyId.replace(/[^A-Za-z0-9]+/g, '_').slice(1, 60)}.eml`;
    fs.writeFileSync(path.join(outbox(), legacyFile), `To: ${ADDRESS}\n\n${BODY}\n`);
    await recordSent(unique('legacy'), {
      organization_id: t.organization_id,
      user_id: u.user_id,
      message_id: legacyId,
      recipient: ADDRESS,
      email_type: 'notification',
      subject: 'old',
      transport: 'file',
      sent_at: new Date(),
    });

    expect(holding(ADDRESS)).toHaveLength(3);
    expect(files()).toHaveLength(4);

    const report = await emailUserData.erase({
      organization_id: t.organization_id,
      user_id: u.user_id,
      idp_id: u.idp_id,
      tombstone: 'del_outboxTest01',
    });
    expect(report).toMatchObject({ emails_deleted: 3, outbox_files_deleted: 3 });
    expect(holding(ADDRESS)).toEqual([]);
    expect(holding(hex)).toHaveLength(1); // the other user's message stays
    // A repeat (the erasure's second pass) finds nothing more.
    expect(
      await emailUserData.erase({
        organization_id: t.organization_id,
        user_id: u.user_id,
        idp_id: u.idp_id,
        tombstone: 'del_outboxTest01',
      }),
    ).toMatchObject({ emails_deleted: 0, outbox_files_deleted: 0 });
  });
});

describe('the outbox and the hourly retention run', () => {
  it("removes outbox files older than OUTBOX_RETENTION_DAYS (7) from the worker's DATA_DIR, and keeps newer ones", async () => {
    const workerOutbox = path.join(inject('platformEnv').DATA_DIR, 'outbox');
    fs.mkdirSync(workerOutbox, { recursive: true });
    const old = path.join(workerOutbox, `old-${hex}.eml`);
    const recent = path.join(workerOutbox, `recent-${hex}.eml`);
    for (const f of [old, recent]) fs.writeFileSync(f, `To: ${ADDRESS}\n\n${BODY}\n`);
    const eightDaysAgo = new Date(Date.now() - 8 * 86_400_000);
    fs.utimesSync(old, eightDaysAgo, eightDaysAgo);
    const sixDaysAgo = new Date(Date.now() - 6 * 86_400_000);
    fs.utimesSync(recent, sixDaysAgo, sixDaysAgo);
    await suite.temporal.schedule.getHandle(retentionScheduleId(inject('platformEnv').TEMPORAL_TASK_QUEUE)).trigger();
    await until(
      'the old outbox file removed',
      async () => fs.existsSync(old),
      (exists) => !exists,
      60_000,
      250,
    );
    expect(fs.existsSync(recent)).toBe(true);
    fs.rmSync(recent);
  }, 90_000);
});
