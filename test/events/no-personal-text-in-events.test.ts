/**
 * The event log keeps no one's words (issue 35, item 5). Events are kept 30 days, delivered to the
 * organization's systems and only tombstoned by an erasure, so their data carries ids, numbers,
 * codes and dates: the write path holds every event to its type's schema
 * (activities/events/schemas.ts). Over HTTP, the leaks the issue reproduced (a document's file name
 * in its thumbnail path, an admin's reversal reason, a run's raw error text); in this process, an
 * event of every type handed free text in declared and undeclared fields.
 */
import { randomBytes } from 'node:crypto';

import { describe, expect, it } from 'vitest';

import { EVENT_TYPES, recordEvent } from '../../activities/events/index.ts';
import { PlatformEvent } from '../../activities/events/models.ts';
import { EVENT_SCHEMAS } from '../../activities/events/schemas.ts';
import { runScheduledEvent } from '../../activities/scheduler/event-runs.ts';
import { insertRun } from '../../activities/scheduler/store.ts';
import { basicUser, call, fileForm, newTenant, type Tenant, unique, until } from '../helpers/api.ts';
import { useSuiteRuntime } from '../helpers/runtime.ts';

useSuiteRuntime();

const hex = randomBytes(4).toString('hex');
const WORDS = `Zelda Quux wrote ${hex}`;
const EMAIL = `zelda.quux.${hex}@example.com`;
const FILE = `Zelda-Quux-${hex}-blood-test`;
const MARKERS = [WORDS, EMAIL, FILE, hex];

const noMarker = (what: string, value: unknown) => {
  const text = typeof value === 'string' ? value : JSON.stringify(value);
  for (const m of MARKERS) expect(text.includes(m), `${what} holds "${m}": ${text.slice(0, 600)}`).toBe(false);
};

type Logged = { id: string; type: string; data: Record<string, any> };
const logOf = async (t: Tenant, type: string): Promise<Logged[]> =>
  (await call('GET', `/api/events?type=${type}&limit=100`, { key: t.adminKey })).body.events;
const oneOf = (t: Tenant, type: string, pick: (e: Logged) => boolean = () => true) =>
  until(
    `a ${type} event`,
    async () => (await logOf(t, type)).filter(pick),
    (es) => es.length === 1,
    30_000,
    250,
  ).then((es) => es[0]);

describe('events over HTTP: what the issue reproduced', () => {
  it("document.processed: no file name, in its data or its thumbnail's path", async () => {
    const t = await newTenant();
    const u = await basicUser(t);
    const conversation_id = (await call('POST', '/initialize_session', { key: u.key, json: { user_id: u.user_id } }))
      .body.conversation_id;
    const res = await call('POST', '/process_document', {
      key: u.key,
      form: fileForm(
        { user_id: u.user_id, session_id: 's1', conversation_id },
        { data: Buffer.from('Invoice number 42\nAmount due 10.00\nDue date 2026-10-01'), name: `${FILE}.txt` },
      ),
    });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const media_id = res.body.metadata.media_id;
    // The thumbnail is named by the media id alone, wherever its path goes.
    expect(res.body.thumbnail_path).toBe(`${t.organization_id}/${u.user_id}/thumbnails/${media_id}.jpg`);
    const event = await oneOf(t, 'document.processed');
    expect(event.data).toMatchObject({
      media_id,
      user_id: u.user_id,
      thumbnail_path: res.body.thumbnail_path,
      format: 'txt',
      mime_type: 'text/plain',
    });
    expect(event.data).not.toHaveProperty('filename');
    noMarker('document.processed', event);
  });

  it("points.reversed: an admin's reason is not in the event (its description is an action credit's action only)", async () => {
    const t = await newTenant();
    const u = await basicUser(t);
    const op = unique('order');
    expect(
      (
        await call('POST', `/loyalty/award-points/${u.user_id}`, {
          key: t.adminKey,
          json: { action_type: 'purchase', operation_id: op },
        })
      ).status,
    ).toBe(200);
    const reversed = await call('POST', '/loyalty/reverse', {
      key: t.adminKey,
      json: { operation_id: op, user_id: u.user_id, reason: `${WORDS}: ${EMAIL} complained`, allow_negative: true },
    });
    expect(reversed.status, JSON.stringify(reversed.body)).toBe(200);
    const event = await oneOf(t, 'points.reversed');
    expect(event.data).toMatchObject({ user_id: u.user_id, reason: 'reversal', description: null, amount: -10 });
    noMarker('points.reversed', event);
    // The credit still says what it was for.
    expect((await oneOf(t, 'points.credited')).data).toMatchObject({ reason: 'action', description: 'purchase' });
  });

  it('scheduled_event.run_failed: the kind of failure, never the raw error text', async () => {
    const t = await newTenant();
    const ev = (
      await call('POST', '/api/scheduler-service/events', {
        key: t.adminKey,
        json: {
          idp_id: unique('biller'),
          type_of_event: 'billing',
          recurrency: 'daily',
          start_event: new Date(Date.now() + 86_400_000).toISOString(),
        },
      })
    ).body.event;
    // A run that failed on the provider's answer quoting the recipient (recorded by an attempt that stopped before its event).
    const run_id = unique('event-run:privacy');
    const at = new Date();
    await insertRun({
      _id: run_id,
      event_id: ev.id,
      organization_id: t.organization_id,
      trigger: 'manual',
      started_at: at,
      finished_at: at,
      outcome: 'failed',
      error: `550 mailbox <${EMAIL}> unavailable: ${WORDS}`,
      failure: 'internal',
      result: null,
    });
    expect(
      (
        await runScheduledEvent({
          event_id: ev.id,
          organization_id: t.organization_id,
          run_id,
          scheduled_time: null,
          max_attempts: 1,
        })
      ).outcome,
    ).toBe('failed');
    const event = await oneOf(t, 'scheduled_event.run_failed', (e) => e.data.run_id === run_id);
    expect(event.data).toEqual({
      event_id: ev.id,
      run_id,
      user_id: ev.user_id,
      type_of_event: 'billing',
      trigger: 'manual',
      scheduled_time: null,
      started_at: expect.any(String),
      finished_at: expect.any(String),
      failure: 'internal',
    });
    noMarker('scheduled_event.run_failed', event);
    // The admin still reads the message in the run list.
    const runs = (await call('GET', `/api/scheduler-service/events/${ev.id}/runs`, { key: t.adminKey })).body.runs;
    expect(runs.find((r: any) => r.run_id === run_id).error).toContain('550 mailbox');
  });
});

describe("the event log's write path", () => {
  it('holds every event type to its schema: undeclared fields are left out, text in id, code or date fields is null', async () => {
    const t = await newTenant();
    expect(Object.keys(EVENT_SCHEMAS).sort()).toEqual([...EVENT_TYPES].sort());
    for (const type of EVENT_TYPES) {
      const shape = EVENT_SCHEMAS[type];
      // Every declared field given a person's words, or an address, plus some undeclared fields.
      for (const given of [WORDS, EMAIL]) {
        const data: Record<string, unknown> = {
          note: WORDS,
          reason_text: WORDS,
          receipt_lines: [WORDS],
          error: `${WORDS} <${EMAIL}>`,
          filename: `${FILE}.pdf`,
        };
        for (const [k, kind] of Object.entries(shape)) {
          if (kind === 'label') continue; // a catalogue name: the organization's words, by declaration
          data[k] =
            typeof kind === 'object' && 'object' in kind
              ? { text: given }
              : typeof kind === 'object' && 'array' in kind
                ? [given, { lines: [given] }]
                : given;
        }
        const id = await recordEvent({
          organization_id: t.organization_id,
          type,
          key: unique(`privacy-${type}`),
          data,
        });
        const doc = await PlatformEvent.findById(id).lean();
        expect(doc, type).toBeTruthy();
        noMarker(`${type} as stored`, doc!.body);
        const body = JSON.parse(doc!.body);
        for (const k of Object.keys(body.data)) expect(Object.keys(shape), `${type}: ${k}`).toContain(k);
      }
    }
  });

  it("a scan's products carry the catalogue's id and name only, and a rejection its code", async () => {
    const t = await newTenant();
    const key = unique('scan');
    const id = await recordEvent({
      organization_id: t.organization_id,
      type: 'scan.rejected',
      key,
      data: {
        scan_id: key,
        user_id: 'usr_PrivacyScanUser1',
        status: 'rejected',
        products: [
          {
            id: '12',
            name: 'Whole Milk 1L',
            quantity: 1,
            points: 10,
            validation_status: 'rejected',
            lines: [`MILK 1L ${WORDS}`],
            notes: WORDS,
            validated_by: 'usr_PrivacyAdmin001',
          },
        ],
        rejection_reason: 'all_products_rejected',
        receipt: { date: '2026-10-05', total: 1.25, text: WORDS },
      },
    });
    const body = JSON.parse((await PlatformEvent.findById(id).lean())!.body);
    expect(body.data).toEqual({
      scan_id: key,
      user_id: 'usr_PrivacyScanUser1',
      status: 'rejected',
      products: [{ id: '12', name: 'Whole Milk 1L', quantity: 1, points: 10, validation_status: 'rejected' }],
      rejection_reason: 'all_products_rejected',
      receipt: { date: '2026-10-05', total: 1.25 },
    });
  });
});
