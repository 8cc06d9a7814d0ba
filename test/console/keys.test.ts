/**
 * The console's Keys page in Chromium: the organization's keys listed, a key named (and a name
 * refused with the platform's message), revoked and rotated behind a confirmation (read back:
 * the platform refuses the old key), and its usage by day as a chart.
 */
import { describe, expect, it } from 'vitest';

import { basicUser, call, newTenant, type Tenant } from '../helpers/api.ts';
import {
  type ConsolePage,
  expectAccessible,
  expectNoProblems,
  openConsole,
  screenshot,
  useBrowser,
  visit,
} from '../helpers/console.ts';

const browser = useBrowser();

interface Listed {
  key_id: string;
  name: string | null;
  status: string;
  user_id: string;
}

/** The user's keys as the platform lists them, newest first. */
async function keysOf(t: Tenant, user_id: string): Promise<Listed[]> {
  const res = await call('GET', `/api/keys?user_ref=${user_id}`, { key: t.adminKey });
  expect(res.status).toBe(200);
  return res.body.api_keys;
}

const verifies = async (key: string) =>
  (await call('POST', '/api/session-service/verify_api_key', { json: { api_key: key } })).body as {
    valid: boolean;
    reason?: string;
  };

/** Opens the keys page and the panel of `key_id` (its Manage button is named by its name or id). */
async function manage(c: ConsolePage, label: string): Promise<void> {
  await visit(c, 'keys', 'Keys');
  await c.page.getByRole('button', { name: `Manage ${label}` }).click();
  await c.page.getByRole('heading', { level: 2, name: `Key ${label}` }).waitFor();
}

describe('console: keys', () => {
  it("lists the organization's keys, names one, and shows a refused name with the platform's message", async () => {
    const t = await newTenant();
    const u = await basicUser(t);
    const [k] = await keysOf(t, u.user_id);
    const c = await openConsole(browser(), t.adminKey);
    await visit(c, 'keys', 'Keys');
    const table = c.page.getByRole('table', { name: 'Keys of the organization, newest first' });
    const row = table.locator('tbody tr').filter({ hasText: k.key_id });
    await expect.poll(() => row.textContent()).toContain(u.idp_id);
    expect(await row.textContent()).toMatch(/basic.*active/);
    // The admin's own key is marked as the one signed in with; the listing shows no secret.
    expect(await table.locator('tbody tr').filter({ hasText: t.admin.idp_id }).textContent()).toContain(
      'signed in with it',
    );
    expect(await c.page.content()).not.toContain(u.key);
    expect(await c.page.content()).not.toContain(t.adminKey);

    await manage(c, k.key_id);
    await c.page.getByRole('textbox', { name: /^Name\b/ }).fill('Front desk tablet');
    await c.page.getByRole('button', { name: 'Save name' }).click();
    await expect.poll(() => c.page.getByRole('status').first().textContent()).toContain('Front desk tablet');
    expect((await keysOf(t, u.user_id))[0].name).toBe('Front desk tablet');
    await expect.poll(() => row.textContent()).toContain('Front desk tablet');
    await screenshot(c, 'keys');
    await expectAccessible(c, "the keys page with a key's panel");

    // Too long a name: the platform refuses it and says why; nothing changes.
    await c.page.getByRole('textbox', { name: /^Name\b/ }).fill('x'.repeat(101));
    await c.page.getByRole('button', { name: 'Save name' }).click();
    await expect.poll(() => c.page.getByRole('alert').textContent()).toMatch(/name.*100.*\(422\)/);
    expect((await keysOf(t, u.user_id))[0].name).toBe('Front desk tablet');
    await expectAccessible(c, 'the keys page with a refusal');
    expectNoProblems(c);
    await c.context.close();
  });

  it('revokes a key only once confirmed: then the platform refuses it', async () => {
    const t = await newTenant();
    const u = await basicUser(t);
    const [k] = await keysOf(t, u.user_id);
    const c = await openConsole(browser(), t.adminKey);
    await manage(c, k.key_id);

    // Cancelled: nothing happens.
    await c.page.getByRole('button', { name: 'Revoke key' }).click();
    const dialog = c.page.getByRole('dialog', { name: `Revoke ${k.key_id}?` });
    await dialog.waitFor();
    expect(await dialog.textContent()).toContain('refused from its very next request');
    await expectAccessible(c, 'the revoke confirmation');
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    await dialog.waitFor({ state: 'hidden' });
    expect((await verifies(u.key)).valid).toBe(true);

    await c.page.getByRole('button', { name: 'Revoke key' }).click();
    await dialog.getByRole('button', { name: 'Revoke', exact: true }).click();
    await expect.poll(() => c.page.getByRole('status').first().textContent()).toContain('API key revoked');
    expect(await verifies(u.key)).toMatchObject({ valid: false, reason: 'revoked' });
    expect((await keysOf(t, u.user_id))[0].status).toBe('revoked');
    const row = c.page.locator('tbody tr').filter({ hasText: k.key_id });
    await expect.poll(() => row.textContent()).toContain('revoked');
    expect(await c.page.getByRole('button', { name: 'Revoke key' }).isDisabled()).toBe(true);

    // The key signed in with: the confirmation warns that the console stops working with it.
    const [mine] = await keysOf(t, t.admin.user_id);
    await c.page.getByRole('button', { name: `Manage ${mine.key_id}` }).click();
    await c.page.getByRole('button', { name: 'Revoke key' }).click();
    const own = c.page.getByRole('dialog', { name: `Revoke ${mine.key_id}?` });
    await expect.poll(() => own.textContent()).toContain('This is the key you are signed in with');
    await own.getByRole('button', { name: 'Cancel' }).click();
    expect((await verifies(t.adminKey)).valid).toBe(true);
    expectNoProblems(c);
    await c.context.close();
  });

  it('rotates a key: the new secret is shown once and works, the old key is refused', async () => {
    const t = await newTenant();
    const u = await basicUser(t);
    const [k] = await keysOf(t, u.user_id);
    const c = await openConsole(browser(), t.adminKey);
    await manage(c, k.key_id);
    await c.page.getByRole('button', { name: 'Rotate key' }).click();
    const confirm = c.page.getByRole('dialog', { name: `Rotate ${k.key_id}?` });
    await confirm.waitFor();
    await expectAccessible(c, 'the rotate confirmation');
    await confirm.getByRole('button', { name: 'Rotate', exact: true }).click();

    const shown = c.page.getByRole('dialog', { name: 'The new key' });
    await shown.waitFor();
    const secret = await shown.getByLabel('New API key').inputValue();
    expect(secret).toMatch(/^pk_/);
    expect(secret).not.toBe(u.key);
    await expectAccessible(c, 'the new secret dialog');
    // Read back: the new key works for the same user, the old one is refused at once (no grace).
    expect(await verifies(secret)).toMatchObject({ valid: true, user_id: u.user_id });
    expect((await verifies(u.key)).valid).toBe(false);
    const listed = await keysOf(t, u.user_id);
    expect(listed.find((x) => x.key_id === k.key_id)?.status).toBe('expired');
    await shown.getByRole('button', { name: 'I have stored it' }).click();
    await shown.waitFor({ state: 'detached' });
    // Shown once: closed, the page holds it no more.
    expect(await c.page.content()).not.toContain(secret);
    await expect.poll(() => c.page.getByRole('status').first().textContent()).toMatch(/Rotated: the new key is key_/);
    expectNoProblems(c);
    await c.context.close();
  });

  it("charts a key's uses by day, as counted by the platform", async () => {
    const t = await newTenant();
    const u = await basicUser(t);
    const [k] = await keysOf(t, u.user_id);
    for (let i = 0; i < 3; i++) expect((await call('GET', `/api/users/${u.user_id}`, { key: u.key })).status).toBe(200);
    expect((await call('GET', '/api/sessions/policy', { key: u.key })).status).toBe(403);

    const c = await openConsole(browser(), t.adminKey, { width: 390, height: 844 });
    await manage(c, k.key_id);
    const figure = c.page.getByRole('figure', { name: /Requests per day/ });
    await figure.waitFor();
    // Counts are written every few seconds: refresh until the four uses are in.
    const total = c.page.getByTestId('usage-total');
    await expect
      .poll(
        async () => {
          await c.page.getByRole('button', { name: 'Refresh usage' }).click();
          return total.textContent();
        },
        { timeout: 20_000, interval: 1000 },
      )
      .toBe('4');
    const facts = await c.page.locator('.usage dl.facts').textContent();
    expect(facts).toMatch(/Succeeded3/);
    expect(facts).toMatch(/Forbidden1/);
    const usage = (await call('GET', `/api/keys/${k.key_id}/usage?days=30`, { key: t.adminKey })).body;
    expect(usage.totals).toMatchObject({ success: 3, forbidden: 1, total: 4 });
    // The chart is drawn (a canvas), and its numbers are in the table under it: today's bar is 4.
    expect(await figure.locator('canvas').count()).toBeGreaterThan(0);
    await figure.getByText('The numbers').click();
    const dayRows = figure.getByRole('table', { name: /Requests per day/ }).locator('tbody tr');
    expect(await dayRows.count()).toBe(30);
    expect(await dayRows.last().locator('td').last().textContent()).toBe('4');
    const overflow = await c.page.evaluate(() => document.documentElement.scrollWidth - innerWidth);
    expect(overflow).toBeLessThanOrEqual(1);
    await screenshot(c, 'keys-usage');
    await expectAccessible(c, "a key's usage chart");
    expectNoProblems(c);
    await c.context.close();
  });
});
