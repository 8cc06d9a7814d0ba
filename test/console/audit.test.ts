/**
 * The console's Audit page in Chromium: an admin change shows in the trail with its changes, a
 * filter by action finds it, "Verify the chain" says intact, and names the first break once a
 * record is altered in the database.
 */
import { describe, expect, it } from 'vitest';

import { AuditRecord } from '../../activities/audit/models.ts';
import { call, newTenant, type Tenant, unique } from '../helpers/api.ts';
import { expectAccessible, expectNoProblems, openConsole, screenshot, useBrowser, visit } from '../helpers/console.ts';
import { useSuiteRuntime } from '../helpers/runtime.ts';

useSuiteRuntime();
const browser = useBrowser();

async function createGift(t: Tenant, name: string): Promise<string> {
  const res = await call('POST', '/api/gifts/gifts', {
    key: t.adminKey,
    json: {
      gift_name: name,
      gift_type: 'electronic_pins',
      country: 'US',
      supplier: 'Steam',
      electronic_pin_amount: 5,
      points_value: 10,
    },
  });
  expect(res.status).toBe(201);
  return res.body.gift.id as string;
}

const trail = (t: Tenant, q = '') => call('GET', `/api/audit?limit=100${q}`, { key: t.adminKey });

describe('console: audit', () => {
  it('shows an admin change in the trail, finds it by its action, and verifies the chain intact', async () => {
    const t = await newTenant();
    const name = unique('Lamp');
    const giftId = await createGift(t, name);
    const all = (await trail(t)).body.records as { action: string; target: { id: string } }[];
    expect(all.some((r) => r.action === 'gift.create' && r.target.id === giftId)).toBe(true);
    expect(all.some((r) => r.action !== 'gift.create')).toBe(true); // the filter has something to leave out

    const c = await openConsole(browser(), t.adminKey);
    await visit(c, 'audit', 'Audit');
    const table = c.page.getByRole('table', { name: 'Audit records, newest first' });
    const rows = table.locator('tbody tr');
    await expect.poll(() => rows.count()).toBe(all.length);
    const giftRow = rows.filter({ hasText: giftId });
    await expect.poll(() => giftRow.textContent()).toContain('gift.create');
    // Its changes: the gift's name as sent, its actor the tenant's admin.
    expect(await giftRow.textContent()).toContain(name);
    expect(await giftRow.textContent()).toContain(t.admin.user_id);
    // Newest first: the gift was the last change.
    expect(await rows.first().textContent()).toContain(giftId);
    await screenshot(c, 'audit');
    await expectAccessible(c, 'the audit trail');

    await c.page.getByLabel('Action').fill('gift.create');
    await c.page.getByRole('button', { name: 'Filter', exact: true }).click();
    await expect.poll(() => rows.count()).toBe(1);
    expect(await rows.first().textContent()).toContain(giftId);
    // A filter nothing matches says so.
    await c.page.getByLabel('Action').fill('nothing.matches');
    await c.page.getByRole('button', { name: 'Filter', exact: true }).click();
    await expect.poll(() => table.textContent()).toContain('No record matches.');
    await c.page.getByRole('button', { name: 'Clear filters' }).click();
    await expect.poll(() => rows.count()).toBe(all.length);
    // An action in the table filters by it too, and the form says so.
    await giftRow.getByRole('button', { name: 'Filter by gift.create' }).click();
    await expect.poll(() => rows.count()).toBe(1);
    expect(await c.page.getByLabel('Action').inputValue()).toBe('gift.create');
    await c.page.getByRole('button', { name: 'Clear filters' }).click();
    await expect.poll(() => rows.count()).toBe(all.length);

    const verified = (await call('GET', '/api/audit/verify', { key: t.adminKey })).body;
    expect(verified).toMatchObject({ ok: true, first_break: null });
    await c.page.getByRole('button', { name: 'Verify the chain' }).click();
    await expect
      .poll(() => c.page.getByRole('status').textContent())
      .toMatch(new RegExp(`intact: ${verified.records_checked} records checked`));
    await expectAccessible(c, 'the audit page with the chain verified');
    expectNoProblems(c);
    await c.context.close();
  });

  it('names the first break of the chain once a record is altered in the database', async () => {
    const t = await newTenant();
    const giftId = await createGift(t, unique('Kettle'));
    await createGift(t, unique('Toaster'));
    const record = (
      (await trail(t, '&action=gift.create')).body.records as { id: string; seq: number; target: { id: string } }[]
    ).find((r) => r.target.id === giftId)!;
    expect(record).toBeTruthy();
    // Altered in place, as test/audit does: its own hash no longer matches.
    await AuditRecord.updateOne({ _id: record.id }, { $set: { action: 'gift.delete' } });
    expect((await call('GET', '/api/audit/verify', { key: t.adminKey })).body).toMatchObject({
      ok: false,
      first_break: { seq: record.seq, reason: 'hash_mismatch' },
    });

    const c = await openConsole(browser(), t.adminKey, { width: 390, height: 844 });
    await visit(c, 'audit', 'Audit');
    await c.page.getByRole('button', { name: 'Verify the chain' }).click();
    const alert = c.page.getByRole('alert');
    await expect.poll(() => alert.textContent()).toContain(`broken at record #${record.seq} (${record.id})`);
    expect(await alert.textContent()).toMatch(/altered/);
    expect(await c.page.getByRole('status').count()).toBe(0);
    // A phone's width: the table scrolls inside its box, the page does not.
    const overflow = await c.page.evaluate(() => document.documentElement.scrollWidth - innerWidth);
    expect(overflow).toBeLessThanOrEqual(1);
    await expectAccessible(c, 'the audit page with a broken chain');
    expectNoProblems(c);
    await c.context.close();
  });
});
