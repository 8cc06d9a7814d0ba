/**
 * The review queues in Chromium: a redemption in needs_review settled (refunded, then completed)
 * behind a confirmation, the counts dropping; a scan's pending line rejected beside its receipt's
 * thumbnail; a handoff claimed, answered and closed. Each change is read back through the API.
 * A support message carrying markup shows as text. Redemptions reach needs_review only past the
 * processing limit (a day on the suite's platform), so they run on a platform of this file's own
 * with a 2 s limit, where the sandbox's slow top-up (numbers ending 0001) goes to review.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { parseEnv } from '../../activities/core/config.ts';
import { generateSecret } from '../../activities/identity/api-keys.ts';
import { launchPlatform, type Platform } from '../../tools/platform.ts';
import { basicUser, call, newTenant, type Tenant, unique, until } from '../helpers/api.ts';
import {
  type ConsolePage,
  expectAccessible,
  expectNoProblems,
  openConsole,
  screenshot,
  useBrowser,
  visit,
} from '../helpers/console.ts';
import { renderReceipt } from '../helpers/receipts.ts';
import { isolatedPlatformEnv } from '../helpers/runtime.ts';
import { balance, groceries, shop } from '../helpers/shop.ts';

const browser = useBrowser();
const XSS = '<img src=x onerror=alert(1)>';

/** Markup in the page's data stays text: no element came of it and no script ran. */
async function expectInert(c: ConsolePage): Promise<void> {
  expect(await c.page.locator('img[src="x"]').count()).toBe(0);
  expect(await c.page.evaluate(() => document.querySelectorAll('main img:not(.thumb)').length)).toBe(0);
}

/** On a phone's width nothing makes the page scroll sideways (tables scroll inside their wrap). */
async function expectFitsPhone(c: ConsolePage): Promise<void> {
  await c.page.setViewportSize({ width: 390, height: 844 });
  expect(await c.page.evaluate(() => document.documentElement.scrollWidth - innerWidth)).toBeLessThanOrEqual(1);
  await c.page.setViewportSize({ width: 1280, height: 860 });
}

describe('review queues: redemptions (own platform, 2 s processing limit)', () => {
  const queue = unique('console-review');
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'console-review-'));
  const platformKey = generateSecret();
  let platform: Platform;
  let t: { organization_id: string; adminKey: string };
  let ana: { key: string; user_id: string };
  let giftId: string;

  const api = (method: string, route: string, key: string, json?: unknown) =>
    call(method, route, { baseUrl: platform.edgeUrl, key, json });

  beforeAll(async () => {
    const env = isolatedPlatformEnv(
      { queue, dataDir, adminKey: platformKey },
      { WORKER_COUNT: '1', GIFT_PROCESSING_LIMIT_SECONDS: '2', LOG_LEVEL: 'warn' },
    );
    platform = await launchPlatform({
      cfg: parseEnv({ ...process.env, ...env }),
      freePorts: true,
      env,
      stdio: 'ignore',
      log: () => undefined,
    });
    const org = (await api('POST', '/api/organizations', platformKey, { name: unique('Review'), tier: 'free' })).body
      .organization.organization_id;
    const a = await api('POST', '/generate_api_key', platformKey, {
      user_id: unique('admin'),
      organization_id: org,
      permissions: ['admin'],
    });
    t = { organization_id: org, adminKey: a.body.api_key };
    const k = await api('POST', '/generate_api_key', t.adminKey, { user_id: unique('ana') });
    ana = { key: k.body.api_key, user_id: k.body.metadata.user_id };
    await api('PUT', '/loyalty/rules', t.adminKey, { actions: { grant: 1000 } });
    expect(
      (await api('POST', `/loyalty/award-points/${ana.user_id}`, t.adminKey, { action_type: 'grant' })).status,
    ).toBe(200);
    const gift = await api('POST', '/api/gifts/gifts', t.adminKey, {
      gift_name: 'Telcel 100 MXN',
      gift_type: 'mobile_top-ups',
      country: 'MX',
      telco_supplier: 'Telcel',
      recharge_amount: 100,
      points_value: 100,
    });
    expect(gift.status, JSON.stringify(gift.body)).toBe(201);
    giftId = gift.body.gift.id;
  }, 300_000);

  afterAll(async () => {
    await platform?.stop();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it('settles redemptions in review: refunded gives the points back, completed keeps them spent; the counts drop', async () => {
    // Numbers ending 0001: the sandbox answers PROCESSING for 30 s, past the 2 s limit.
    const ids: string[] = [];
    for (const phone of ['+525512300001', '+525512310001']) {
      const res = await api('POST', `/api/gifts/gifts/${giftId}/redeem`, ana.key, {
        user_id: ana.user_id,
        phone_number: phone,
        idempotency_key: unique('k'),
      });
      expect([200, 202], JSON.stringify(res.body)).toContain(res.status);
      ids.push(res.body.redemption.id);
    }
    for (const id of ids)
      await until(
        `${id} in review`,
        async () => (await api('GET', `/api/gifts/redemptions/${id}`, t.adminKey)).body.redemption,
        (r) => r.status === 'needs_review',
        60_000,
      );
    const points = async () => (await api('GET', `/loyalty/points/${ana.user_id}`, t.adminKey)).body.points as number;
    expect(await points()).toBe(800);

    const c = await openConsole(browser());
    await c.page.goto(`${platform.edgeUrl}/console`);
    await c.page.getByLabel('Admin API key').fill(t.adminKey);
    await c.page.getByRole('button', { name: 'Sign in' }).click();
    await c.page.getByRole('navigation', { name: 'Console' }).waitFor();
    const sideCount = c.page.locator('nav.side .count');
    const tabCount = c.page.locator('nav.queues a[href="#/reviews/redemptions"] .badge');
    await expect.poll(() => sideCount.textContent(), { timeout: 20_000 }).toBe('2');
    await visit(c, 'reviews/redemptions', 'Review queues');
    await expect.poll(() => tabCount.textContent(), { timeout: 20_000 }).toBe('2');
    const table = c.page.getByRole('table', { name: /Redemptions in review/ });
    await expect.poll(() => table.getByRole('row').count(), { timeout: 20_000 }).toBe(3);
    const text = (await table.textContent())!;
    expect(text).toContain('Telcel 100 MXN');
    expect(text).toContain(ana.user_id);
    expect(text).toContain('sandbox'); // the provider's answer: who, and why it is in review
    await screenshot(c, 'reviews-redemptions');
    await expectFitsPhone(c);
    await expectAccessible(c, 'the redemptions queue');

    // Refund the first: the confirmation says the points come back.
    const [refundIt, completeIt] = ids;
    await c.page.locator(`a[href="#/reviews/redemptions/${refundIt}"]`).click();
    await c.page.getByRole('heading', { level: 2, name: 'Settle Telcel 100 MXN' }).waitFor();
    await c.page.getByLabel('Note for admins').fill('Provider support: order never delivered');
    await c.page.getByRole('button', { name: 'Refund the points' }).click();
    const dialog = c.page.getByRole('dialog', { name: 'Refund the points?' });
    await dialog.waitFor();
    expect(await dialog.textContent()).toMatch(/100 held points go back to/);
    await expectAccessible(c, 'the refund confirmation');
    await dialog.getByRole('button', { name: 'Refund the points' }).click();
    await expect.poll(() => c.page.getByRole('status').textContent(), { timeout: 30_000 }).toMatch(/^Refunded: 100/);
    const refunded = (await api('GET', `/api/gifts/redemptions/${refundIt}`, t.adminKey)).body.redemption;
    expect(refunded).toMatchObject({
      status: 'refunded',
      points_refunded: 100,
      settlement: { outcome: 'refunded', reason: 'Provider support: order never delivered' },
    });
    expect(await points()).toBe(900);
    // Back on the list: the shell and the tab read the counts again.
    await expect.poll(() => sideCount.textContent(), { timeout: 20_000 }).toBe('1');
    await expect.poll(() => tabCount.textContent(), { timeout: 20_000 }).toBe('1');
    await expect.poll(() => table.getByRole('row').count(), { timeout: 20_000 }).toBe(2);

    // Complete the second: cancelling first changes nothing.
    await c.page.locator(`a[href="#/reviews/redemptions/${completeIt}"]`).click();
    await c.page.getByRole('button', { name: 'Settle as completed' }).click();
    const done = c.page.getByRole('dialog', { name: 'Settle as completed?' });
    expect(await done.textContent()).toMatch(/stay spent/);
    await done.getByRole('button', { name: 'Cancel' }).click();
    expect((await api('GET', `/api/gifts/redemptions/${completeIt}`, t.adminKey)).body.redemption.status).toBe(
      'needs_review',
    );
    await c.page.getByRole('button', { name: 'Settle as completed' }).click();
    await done.getByRole('button', { name: 'Settle as completed' }).click();
    await expect.poll(() => c.page.getByRole('status').textContent(), { timeout: 30_000 }).toMatch(/^Completed:/);
    const completed = (await api('GET', `/api/gifts/redemptions/${completeIt}`, t.adminKey)).body.redemption;
    expect(completed).toMatchObject({ status: 'completed', settlement: { outcome: 'completed' } });
    expect(await points()).toBe(900);
    // Nothing waits: the navigation shows no count at all.
    await expect.poll(() => sideCount.count(), { timeout: 20_000 }).toBe(0);
    await expect.poll(() => table.textContent()).toContain('No redemption waits for review.');

    // A settled redemption opened again: nothing left to settle.
    await visit(c, `reviews/redemptions/${completeIt}`, 'Review queues');
    await expect.poll(() => c.page.getByText(/there is nothing to settle/).count()).toBe(1);
    expectNoProblems(c);
    await c.context.close();
  }, 240_000);
});

describe('review queues on the suite platform', () => {
  it("validates a scan beside its receipt: a pending line rejected, the others' points credited once", async () => {
    const s = await shop();
    const user = await basicUser(s.t);
    // bread at 5.99 where the venue sells it at 3.49: its price disagrees, so it waits
    const spec = groceries('2026-11-22');
    spec.items[3] = { name: 'Sourdough Bread', price: 5.99 };
    spec.items[1] = { name: 'Organic Bananas 1kg', qty: 3, price: 5.97 };
    const image = await renderReceipt(spec);
    const res = await call('POST', '/api/ticket-scan/loyalty/ticket-scan', {
      key: user.key,
      json: { user_id: user.idp_id, venue_id: String(s.venue.id), brand_id: null, image: image.toString('base64') },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.status).toBe('pending_validation');
    const bread = res.body.products.find((p: any) => p.name === 'Sourdough Bread');
    expect(bread.validation_status).toBe('pending');

    const c = await openConsole(browser(), s.t.adminKey);
    await visit(c, 'reviews/scans', 'Review queues');
    const table = c.page.getByRole('table', { name: /Scans waiting/ });
    await expect.poll(() => table.getByRole('row').count(), { timeout: 20_000 }).toBe(2);
    expect(await c.page.locator('nav.queues a[href="#/reviews/scans"] .badge').textContent()).toBe('1');
    await expectAccessible(c, 'the scans queue');
    await c.page.locator(`a[href="#/reviews/scans/${res.body.id}"]`).click();
    // The receipt's thumbnail, fetched with the key, beside the lines.
    const thumb = c.page.getByRole('img', { name: new RegExp(`^Receipt of ${user.user_id}`) });
    await thumb.waitFor({ timeout: 20_000 });
    expect(await thumb.getAttribute('class')).toBe('thumb');
    expect(await thumb.getAttribute('src')).toMatch(/^blob:/);
    await expect.poll(() => thumb.evaluate((i: HTMLImageElement) => i.naturalWidth)).toBeGreaterThan(0);
    const lines = c.page.getByRole('table', { name: "The receipt's products" });
    expect(await lines.textContent()).toContain('Sourdough Bread');
    await c.page.getByLabel('Decision on Sourdough Bread').selectOption('reject');
    await c.page.getByLabel('Note on the decisions').fill('price on the receipt is not the venue price');
    await screenshot(c, 'reviews-scans');
    await expectFitsPhone(c);
    await expectAccessible(c, 'a scan to validate');
    await c.page.getByRole('button', { name: 'Submit decisions' }).click();
    const dialog = c.page.getByRole('dialog', { name: 'Submit the decisions?' });
    expect(await dialog.textContent()).toMatch(/0 line\(s\) approved and 1 rejected.*credits 60 points/);
    await expectAccessible(c, 'the validation confirmation');
    await dialog.getByRole('button', { name: 'Submit decisions' }).click();
    await expect
      .poll(() => c.page.getByRole('status').textContent(), { timeout: 30_000 })
      .toMatch(/Scan validated: 60 points/);

    const back = await call('GET', `/api/ticket-scan/loyalty/ticket-scan/${res.body.id}`, { key: s.t.adminKey });
    expect(back.body).toMatchObject({ status: 'completed', points_processed: true, total_points: 60 });
    expect(back.body.products.find((p: any) => p.id === bread.id)).toMatchObject({
      validation_status: 'rejected',
      validated_by: s.t.admin.user_id,
      notes: 'price on the receipt is not the venue price',
    });
    expect(await balance(s.t, user.user_id)).toBe(60);
    await expect.poll(() => table.textContent(), { timeout: 20_000 }).toContain('No scan waits for validation.');
    expectNoProblems(c);
    await c.context.close();
  }, 120_000);

  async function handoff(t: Tenant, prompt: string) {
    const user = await basicUser(t);
    const session = await call('POST', '/initialize_session', { key: user.key, json: { user_id: user.user_id } });
    expect(session.status).toBe(200);
    const conv = session.body.conversation_id as string;
    const res = await call('POST', '/support', {
      key: user.key,
      json: { prompt, user_id: user.user_id, conversation_id: conv },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.metadata.escalate).toBe(true);
    return { user, conv, handoff_id: res.body.metadata.handoff_id as string };
  }

  it('claims, replies to and closes a support handoff; markup in a message shows as text', async () => {
    const t = await newTenant();
    const kb = await call('POST', '/support/knowledge', {
      key: t.adminKey,
      json: { title: 'Refund policy', body: 'You can request a refund within 30 days of purchase.', tags: ['billing'] },
    });
    expect(kb.status).toBe(201);
    const question = `I want to talk to a real person ${XSS}`;
    const { user, conv, handoff_id } = await handoff(t, question);
    const dialogs: string[] = [];
    const c = await openConsole(browser(), t.adminKey);
    c.page.on('dialog', (d) => (dialogs.push(d.message()), void d.dismiss()));
    await visit(c, 'reviews/handoffs', 'Review queues');
    const open = c.page.getByRole('table', { name: /nobody claimed/ });
    await expect.poll(() => open.getByRole('row').count(), { timeout: 20_000 }).toBe(2);
    expect(await open.textContent()).toContain(question);
    expect(await open.textContent()).toContain('Asked for a person');
    await expectInert(c);
    await expectAccessible(c, 'the handoffs queue');

    await c.page.locator(`a[href="#/reviews/handoffs/${handoff_id}"]`).click();
    await c.page.getByRole('heading', { level: 2, name: `Handoff of ${user.user_id}` }).waitFor();
    const conversation = c.page.locator('ol.conversation');
    await expect.poll(() => conversation.textContent(), { timeout: 20_000 }).toContain(question);
    await c.page.getByRole('button', { name: 'Claim' }).click();
    await expect.poll(() => c.page.getByRole('status').textContent(), { timeout: 20_000 }).toMatch(/claimed/);
    const read = async () =>
      (
        await call('GET', `/api/support/handoffs?status=${'claimed'}&limit=100`, { key: t.adminKey })
      ).body.handoffs.find((h: any) => h.handoff_id === handoff_id);
    expect(await read()).toMatchObject({ status: 'claimed', claimed_by: t.admin.user_id });
    await c.page
      .getByRole('table', { name: /being answered/ })
      .getByText(question)
      .waitFor();

    const reply = `Hello! A person here. ${XSS} is what you typed.`;
    await c.page.getByLabel('Reply to the member').fill(reply);
    await screenshot(c, 'reviews-handoffs');
    await expectFitsPhone(c);
    await expectAccessible(c, 'a claimed handoff');
    await c.page.getByRole('button', { name: 'Send reply' }).click();
    await expect.poll(() => c.page.getByRole('status').textContent(), { timeout: 20_000 }).toMatch(/Reply sent/);
    expect((await read()).replies.map((r: any) => r.text)).toEqual([reply]);
    const seen = await call('GET', `/get_response/${conv}?user_id=${user.user_id}`, { key: user.key });
    expect(seen.body.responses.filter((r: any) => r.source === 'support_agent').map((r: any) => r.message)).toEqual([
      reply,
    ]);
    // The reply shows in the conversation, as text.
    await expect
      .poll(() => conversation.locator('li.support_agent').textContent(), { timeout: 20_000 })
      .toContain(reply);
    expect(await c.page.getByLabel('Reply to the member').inputValue()).toBe('');
    await expectInert(c);

    await c.page.getByRole('button', { name: 'Close the handoff' }).click();
    const dialog = c.page.getByRole('dialog', { name: 'Close this handoff?' });
    expect(await dialog.textContent()).toMatch(/no more replies/);
    await expectAccessible(c, 'the close confirmation');
    await dialog.getByRole('button', { name: 'Close the handoff' }).click();
    await expect.poll(() => c.page.getByRole('status').textContent(), { timeout: 20_000 }).toMatch(/Handoff closed/);
    const closed = (
      await call('GET', '/api/support/handoffs?status=closed&limit=100', { key: t.adminKey })
    ).body.handoffs.find((h: any) => h.handoff_id === handoff_id);
    expect(closed).toMatchObject({ status: 'closed', closed_by: t.admin.user_id });
    await expect
      .poll(() => c.page.getByRole('table', { name: /being answered/ }).textContent(), { timeout: 20_000 })
      .toContain('No handoff is claimed.');
    expect(dialogs).toEqual([]);
    expectNoProblems(c);
    await c.context.close();
  }, 120_000);
});
