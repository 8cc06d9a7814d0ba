/**
 * The console's Webhooks page in Chromium, against a receiver on 127.0.0.1 that fails or succeeds
 * as planned (the suite retries after 0.2 s, 0.8 s, 3.2 s, 12.8 s, ...): the endpoints with their
 * queues, an endpoint's deliveries retried by hand, pause/resume, a rotated secret shown once, a
 * replay, and the platform's refusals shown as messages. Each UI action is read back over HTTP.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { call, newTenant, type Tenant, unique, until } from '../helpers/api.ts';
import {
  type ConsolePage,
  expectAccessible,
  expectNoProblems,
  openConsole,
  screenshot,
  useBrowser,
  visit,
} from '../helpers/console.ts';
import { addEndpoint, receivedAt, type Receiver, startReceiver, verified } from '../helpers/receiver.ts';

const browser = useBrowser();
let rx: Receiver;

beforeAll(async () => {
  rx = await startReceiver();
});
afterAll(() => rx.close());

interface Attempt {
  at: string;
  status: number | null;
}
interface Delivery {
  id: string;
  event_id: string;
  status: string;
  attempts: Attempt[];
  next_attempt_at: string | null;
}

const endpointOf = async (t: Tenant, id: string) =>
  (await call('GET', `/api/webhooks/endpoints/${id}`, { key: t.adminKey })).body.endpoint;
const statsOf = async (t: Tenant, id: string) =>
  (await call('GET', `/api/webhooks/endpoints/${id}/stats`, { key: t.adminKey })).body.stats;
const deliveriesOf = async (t: Tenant, id: string): Promise<Delivery[]> =>
  (await call('GET', `/api/webhooks/deliveries?endpoint_id=${id}&limit=100`, { key: t.adminKey })).body.deliveries;
const ping = async (t: Tenant, id: string) =>
  expect((await call('POST', `/api/webhooks/endpoints/${id}/test`, { key: t.adminKey })).status).toBe(202);
const onlyDelivery = (t: Tenant, id: string, ok: (d: Delivery) => boolean, what: string) =>
  until(
    what,
    async () => (await deliveriesOf(t, id))[0],
    (d) => d !== undefined && ok(d),
    20_000,
  );
/** The row of a table that mentions `text`. */
const row = (c: ConsolePage, text: string) => c.page.getByRole('row').filter({ hasText: text });

describe('console: webhook endpoints', () => {
  it('lists the endpoints with their queue: state, backlog, success rate, last success and last error', async () => {
    const t = await newTenant();
    const healthyPath = unique('/healthy');
    const failingPath = unique('/failing');
    rx.plan(
      failingPath,
      Array.from({ length: 30 }, () => 500),
    );
    const healthy = await addEndpoint(t, rx, healthyPath);
    const failing = await addEndpoint(t, rx, failingPath);
    await ping(t, healthy.id);
    await ping(t, failing.id);
    await until(
      'the healthy ping counted',
      () => statsOf(t, healthy.id),
      (s) => s?.last_24h.succeeded === 1,
      20_000,
    );
    await until(
      'two failures counted',
      () => statsOf(t, failing.id),
      (s) => s?.last_24h.failed >= 2,
      20_000,
    );
    // Paused, the failing endpoint's figures stay as they are while the page is read.
    await call('POST', `/api/webhooks/endpoints/${failing.id}/pause`, { key: t.adminKey });
    await new Promise((r) => setTimeout(r, 1500));
    const fs = await statsOf(t, failing.id);
    expect(fs).toMatchObject({ state: 'paused', backlog: 1, last_error: { status: 500 } });

    const c = await openConsole(browser(), t.adminKey);
    await visit(c, 'webhooks', 'Webhooks');
    const good = row(c, rx.url(healthyPath));
    await expect.poll(() => good.textContent()).toContain('100 % of 1 attempt');
    const goodText = (await good.textContent())!;
    expect(goodText).toContain('active');
    expect(goodText).not.toContain('HTTP 500');
    const bad = (await row(c, rx.url(failingPath)).textContent())!;
    expect(bad).toContain('paused');
    expect(bad).toContain('HTTP 500');
    const pct = Math.round((fs.last_24h.succeeded / fs.last_24h.attempts) * 1000) / 10;
    expect(bad).toContain(`${pct} % of ${fs.last_24h.attempts} attempts`);
    // Backlog 1, and the oldest undelivered has waited some seconds.
    const cells = await row(c, rx.url(failingPath)).getByRole('cell').allTextContents();
    expect(cells[2]).toBe('1');
    expect(cells[3]).toMatch(/^\d+ s$/);
    await screenshot(c, 'webhooks-endpoints');
    await expectAccessible(c, 'the webhook endpoints');
    // The endpoint's page opens from its link.
    await c.page.getByRole('link', { name: rx.url(failingPath) }).click();
    await c.page.getByRole('heading', { level: 1, name: 'Webhook endpoint' }).waitFor();
    await expect.poll(() => c.page.getByRole('main').textContent()).toContain(failing.id);
    expectNoProblems(c);
    await c.context.close();

    // On a phone's width the endpoint page does not scroll sideways (its tables scroll inside).
    const phone = await openConsole(browser(), t.adminKey, { width: 390, height: 844 });
    await visit(phone, `webhooks/${failing.id}`, 'Webhook endpoint');
    await row(phone, 'ping').first().waitFor();
    expect(await phone.page.evaluate(() => document.documentElement.scrollWidth - innerWidth)).toBeLessThanOrEqual(1);
    expectNoProblems(phone);
    await phone.context.close();
  });

  it('retries a failing delivery from its page once the receiver is fixed, and it succeeds', async () => {
    const t = await newTenant();
    const path = unique('/fixed-later');
    rx.plan(
      path,
      Array.from({ length: 30 }, () => 500),
    );
    const ep = await addEndpoint(t, rx, path);
    await ping(t, ep.id);
    // Four failed attempts: the next one on the schedule is 12.8 s (±20%) away.
    const failed = await onlyDelivery(t, ep.id, (d) => d.attempts.length >= 4 && !!d.next_attempt_at, '4 attempts');
    expect(failed.status).toBe('retrying');

    const c = await openConsole(browser(), t.adminKey);
    await visit(c, `webhooks/${ep.id}`, 'Webhook endpoint');
    const r = row(c, failed.event_id);
    await expect.poll(() => r.textContent()).toContain('retrying');
    expect(await r.textContent()).toContain('HTTP 500');
    await screenshot(c, 'webhooks-deliveries');
    await expectAccessible(c, "an endpoint's page with its deliveries");

    rx.plan(path, []); // fixed: 200 from now on
    await c.page.getByRole('button', { name: `Retry delivery ${failed.id}` }).click();
    await expect.poll(() => c.page.getByRole('status').first().textContent()).toMatch(/attempted again now/);
    const done = await onlyDelivery(t, ep.id, (d) => d.status === 'succeeded', 'the delivery succeeded');
    const last = done.attempts.at(-1)!;
    expect(last.status).toBe(200);
    // The retry by hand made it, before the schedule's next attempt was due.
    expect(Date.parse(last.at)).toBeLessThan(Date.parse(failed.next_attempt_at!));
    await c.page.getByRole('button', { name: 'Refresh deliveries' }).click();
    await expect.poll(() => r.textContent(), { timeout: 20_000 }).toContain('succeeded');
    expect(await r.textContent()).toContain('HTTP 200');

    // The status filter asks the platform for that status only.
    await c.page.getByLabel('Status').selectOption('failed');
    await expect.poll(() => c.page.getByRole('table').textContent()).toContain('No failed delivery.');
    await c.page.getByLabel('Status').selectOption('succeeded');
    await expect.poll(() => r.textContent()).toContain('succeeded');
    expectNoProblems(c);
    await c.context.close();
  });

  it('pauses and resumes an endpoint; a second retry of a delivery already due is refused with the reason', async () => {
    const t = await newTenant();
    const path = unique('/paused');
    const ep = await addEndpoint(t, rx, path);
    const c = await openConsole(browser(), t.adminKey);
    await visit(c, `webhooks/${ep.id}`, 'Webhook endpoint');

    await c.page.getByRole('button', { name: 'Pause' }).click();
    await expect.poll(() => c.page.getByRole('status').first().textContent()).toMatch(/Paused/);
    await expect.poll(async () => (await endpointOf(t, ep.id)).paused_at).toEqual(expect.any(String));
    await c.page.getByRole('button', { name: 'Resume' }).waitFor();

    // A test event from the page waits in the queue while paused.
    await c.page.getByRole('button', { name: 'Send test event' }).click();
    await expect.poll(() => c.page.getByRole('status').first().textContent()).toMatch(/Test event .* queued/);
    const queued = await onlyDelivery(t, ep.id, (d) => d.status === 'pending', 'the ping queued');
    await c.page.getByRole('button', { name: 'Refresh deliveries' }).click();
    await expect.poll(() => row(c, queued.event_id).textContent()).toContain('pending');
    await expectAccessible(c, 'a paused endpoint');

    // An attempt is already due: the platform refuses another, and the page says why.
    await c.page.getByRole('button', { name: `Retry delivery ${queued.id}` }).click();
    await expect.poll(() => c.page.getByRole('alert').first().textContent()).toMatch(/already due.*\(409\)/);
    await new Promise((r) => setTimeout(r, 500));
    expect(rx.received(path)).toHaveLength(0);
    expect((await deliveriesOf(t, ep.id))[0]).toMatchObject({ status: 'pending', attempts: [] });

    await c.page.getByRole('button', { name: 'Resume' }).click();
    await expect.poll(() => c.page.getByRole('status').first().textContent()).toMatch(/Resumed/);
    expect((await endpointOf(t, ep.id)).paused_at).toBeNull();
    await receivedAt(rx, path, 1);
    await onlyDelivery(t, ep.id, (d) => d.status === 'succeeded', 'the ping delivered');
    await c.page.getByRole('button', { name: 'Pause' }).waitFor();
    expectNoProblems(c);
    await c.context.close();
  });

  it('rotates the secret after a confirmation, shows the new one once, and requests then carry both signatures', async () => {
    const t = await newTenant();
    const path = unique('/rotated');
    const ep = await addEndpoint(t, rx, path);
    const c = await openConsole(browser(), t.adminKey);
    await visit(c, `webhooks/${ep.id}`, 'Webhook endpoint');

    await c.page.getByRole('button', { name: 'Rotate secret…' }).click();
    const confirm = c.page.getByRole('dialog', { name: 'Rotate the signing secret?' });
    await confirm.waitFor();
    expect(await confirm.textContent()).toMatch(/keeps signing too for 24 hours/);
    await expectAccessible(c, 'the rotation confirmation');
    await confirm.getByRole('button', { name: 'Rotate secret', exact: true }).click();

    const shown = c.page.getByRole('dialog', { name: 'New signing secret' });
    await shown.waitFor();
    expect(await shown.textContent()).toMatch(/will not be shown again/);
    const secret = await shown.getByLabel('Signing secret').inputValue();
    expect(secret).toMatch(/^whsec_/);
    expect(secret).not.toBe(ep.secret);
    await expectAccessible(c, 'the new secret dialog');
    await shown.getByRole('button', { name: 'Done, close' }).click();
    await expect.poll(() => shown.count()).toBe(0);
    // Once closed, the secret is nowhere on the page any more.
    expect(await c.page.content()).not.toContain(secret);
    await expect.poll(() => c.page.getByRole('status').first().textContent()).toMatch(/also signs until/);

    // Read back: the previous secret signs for about a day, and a request verifies with either.
    const e = await endpointOf(t, ep.id);
    expect(Date.parse(e.previous_secret_expires_at) - Date.now()).toBeGreaterThan(23 * 3_600_000);
    await ping(t, ep.id);
    const [got] = await receivedAt(rx, path, 1);
    expect(verified(secret, got).type).toBe('ping');
    expect(verified(ep.secret, got).type).toBe('ping');
    expectNoProblems(c);
    await c.context.close();
  });

  it('replays the deliveries since a time, and shows why a time in the future is refused', async () => {
    const t = await newTenant();
    const path = unique('/replayed');
    const ep = await addEndpoint(t, rx, path);
    await ping(t, ep.id);
    const [first] = await receivedAt(rx, path, 1);
    const done = await onlyDelivery(t, ep.id, (d) => d.status === 'succeeded', 'the ping delivered');

    const c = await openConsole(browser(), t.adminKey);
    await visit(c, `webhooks/${ep.id}`, 'Webhook endpoint');
    // datetime-local values are the browser's local time: computed in the page.
    const local = (offsetMs: number) =>
      c.page.evaluate((ms) => {
        const d = new Date(Date.now() + ms);
        const p = (n: number) => String(n).padStart(2, '0');
        return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())}T${p(d.getHours())}:${p(d.getMinutes())}`;
      }, offsetMs);
    const since = c.page.getByLabel('Since (your local time)');
    await since.fill(await local(-10 * 60_000));
    await c.page.getByRole('button', { name: 'Replay' }).click();
    await expect.poll(() => c.page.getByRole('status').first().textContent()).toMatch(/1 delivery queued again/);
    const again = await receivedAt(rx, path, 2);
    expect(again[1].headers['webhook-id']).toBe(first.headers['webhook-id']);
    const replayed = await onlyDelivery(
      t,
      ep.id,
      (d) => d.status === 'succeeded' && d.attempts.length === 2,
      'the delivery replayed',
    );
    expect(replayed.id).toBe(done.id);

    // A start after now: the platform refuses it and the page shows its reason.
    await since.fill(await local(24 * 3_600_000));
    await c.page.getByRole('button', { name: 'Replay' }).click();
    await expect.poll(() => c.page.getByRole('alert').first().textContent()).toMatch(/since must be before until/);
    await expectAccessible(c, 'a refused replay');
    await new Promise((r) => setTimeout(r, 500));
    expect(rx.received(path)).toHaveLength(2);
    expectNoProblems(c);
    await c.context.close();
  });
});
