/**
 * The console's Members page in Chromium: finding a member (by idp_id, email, user id), their
 * page, awarding and reversing points, a refusal shown as the platform's message, a hostile
 * display name shown as text, an export downloaded and an erasure confirmed by typing the idp_id.
 * Each change is read back from the platform, not only from the page.
 */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';

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
const tag = () => randomBytes(4).toString('hex');

/** A member with a basic key (so keys show), a profile and a session. */
async function member(t: Tenant, idp_id: string, profile: { email?: string; display_name?: string } = {}) {
  const u = await basicUser(t, idp_id);
  if (profile.email || profile.display_name) {
    const res = await call('POST', '/api/users', { key: t.adminKey, json: { idp_id, ...profile } });
    expect(res.status, JSON.stringify(res.body)).toBeLessThan(300);
  }
  const s = await call('POST', '/initialize_session', { key: u.key, json: { user_id: u.user_id, source: 'mobile' } });
  expect(s.status).toBe(200);
  return u;
}

const points = async (t: Tenant, user_id: string) =>
  (await call('GET', `/loyalty/points/${user_id}`, { key: t.adminKey })).body.points as number;

/** The rows of a table's body, by its caption. */
const rows = (c: ConsolePage, caption: string | RegExp) =>
  c.page.getByRole('table', { name: caption }).locator('tbody tr');

async function search(c: ConsolePage, q: string) {
  await c.page.getByLabel('Find a member').fill(q);
  await c.page.getByRole('button', { name: 'Search', exact: true }).click();
  await c.page.getByRole('table', { name: `Members matching ${q}` }).waitFor();
}

describe('console: members', () => {
  it('finds a member by idp_id, by email and by user id, and opens their page', async () => {
    const t = await newTenant();
    const x = tag();
    const alice = await member(t, `sso|${x}-alice`, { email: `Alice.${x}@Example.com`, display_name: 'Alice Example' });
    const bob = await member(t, `sso|${x}-bob`, { email: `bob.${x}@example.com` });
    const c = await openConsole(browser(), t.adminKey);
    await visit(c, 'members', 'Members');
    // Without a search: the newest members, Bob first, then Alice, then the tenant's admin.
    await expect.poll(() => rows(c, 'Newest members first').count()).toBe(3);
    await expect(rows(c, 'Newest members first').first().textContent()).resolves.toContain(bob.idp_id);
    await expectAccessible(c, 'the members list');
    await screenshot(c, 'members-search');

    for (const q of [`sso|${x}-al`, `alice.${x}@example`, alice.user_id]) {
      await search(c, q);
      const found = rows(c, `Members matching ${q}`);
      await expect.poll(() => found.count(), { message: q }).toBe(1);
      await expect(found.first().textContent()).resolves.toContain(alice.idp_id);
    }
    await search(c, `sso|${x}-nobody`);
    await expect
      .poll(() => rows(c, `Members matching sso|${x}-nobody`).textContent())
      .toBe('No member matches this search.');

    await search(c, `sso|${x}-`);
    await expect.poll(() => rows(c, `Members matching sso|${x}-`).count()).toBe(2);
    await c.page.getByRole('link', { name: 'Alice Example' }).click();
    await c.page.getByRole('heading', { level: 1, name: 'Member Alice Example' }).waitFor();
    expect(c.page.url()).toContain(`#/members/${alice.user_id}`);
    const main = c.page.getByRole('main');
    await expect.poll(() => main.textContent()).toContain(`Alice.${x}@Example.com`);
    await expect.poll(() => rows(c, "The member's keys").count()).toBe(1);
    await expect(rows(c, "The member's keys").textContent()).resolves.toContain('active');
    await expect.poll(() => rows(c, "The member's sessions, newest first").textContent()).toContain('mobile');
    await expect.poll(() => main.textContent()).toContain('No points yet.');
    await expectAccessible(c, 'the member page');
    await screenshot(c, 'members-detail');
    // Back to the list: the last search is still there.
    await c.page.getByRole('link', { name: '← Members' }).click();
    await expect.poll(() => rows(c, `Members matching sso|${x}-`).count()).toBe(2);
    expectNoProblems(c);
    await c.context.close();
  });

  it('awards and reverses points behind a confirmation, and shows a refused award as the platform says it', async () => {
    const t = await newTenant();
    const tiers = await call('PUT', '/loyalty/tiers', {
      key: t.adminKey,
      json: { tiers: [{ tier_id: 'silver', name: 'Silver', threshold: 100 }], window: { type: 'calendar_year' } },
    });
    expect(tiers.status).toBe(200);
    const u = await member(t, `m-${tag()}`, { display_name: 'Carla Points' });
    const c = await openConsole(browser(), t.adminKey);
    await visit(c, `members/${u.user_id}`, 'Member Carla Points');
    const main = c.page.getByRole('main');

    // profile_completed: 50 points, once ever for a member (the default rules).
    await c.page.getByLabel('Action', { exact: true }).selectOption('profile_completed');
    await c.page.getByLabel(/^Reason/).fill('welcome gift');
    await c.page.getByRole('button', { name: 'Award points…' }).click();
    const dialog = c.page.getByRole('dialog', { name: 'Award 50 points' });
    await dialog.waitFor();
    await expect(dialog.textContent()).resolves.toMatch(/Carla Points \(m-\w+\) will be credited 50 points/);
    expect((await points(t, u.user_id)) ?? 0).toBe(0); // nothing before the confirmation
    await expectAccessible(c, 'the award confirmation');
    await dialog.getByRole('button', { name: 'Award 50 points' }).click();
    await expect
      .poll(() => c.page.getByRole('status').allTextContents())
      .toContainEqual(expect.stringContaining('Awarded 50 points to Carla Points'));
    expect(await points(t, u.user_id)).toBe(50);
    // The reason is the award's note, in the member's history.
    const awarded = await call('GET', `/loyalty/points/${u.user_id}/history`, { key: t.adminKey });
    expect(awarded.body.entries[0]).toMatchObject({ amount: 50, note: 'welcome gift' });
    await expect.poll(() => main.textContent()).toContain('profile_completed (welcome gift)');
    await expect.poll(() => c.page.locator('.balance').textContent()).toBe('50');
    // The tier's progress follows: half way to Silver.
    const progress = c.page.getByRole('progressbar', { name: /50 points to Silver/ });
    await expect.poll(() => progress.getAttribute('value')).toBe('50');
    expect((await call('GET', `/loyalty/members/${u.user_id}/tier`, { key: t.adminKey })).body).toMatchObject({
      earned_in_window: 50,
      next_tier: { tier_id: 'silver', points_needed: 50 },
    });

    // Refused: the action's limit (once ever) is reached; the platform's message, nothing credited.
    await c.page.getByLabel(/^Reason/).fill('second try');
    await c.page.getByRole('button', { name: 'Award points…' }).click();
    await c.page
      .getByRole('dialog', { name: 'Award 50 points' })
      .getByRole('button', { name: 'Award 50 points' })
      .click();
    await expect
      .poll(() => main.getByRole('alert').textContent())
      .toMatch(/Limit reached.*nothing was credited.*\(409\)/);
    expect(await points(t, u.user_id)).toBe(50);

    // Reverse: a reason is asked for, then the credit is taken back.
    await expect.poll(() => rows(c, 'Ledger entries, newest first').count()).toBe(1);
    await c.page.getByRole('button', { name: /^Reverse 50 points of award:/ }).click();
    const rev = c.page.getByRole('dialog', { name: 'Reverse 50 points' });
    await rev.waitFor();
    await expect(rev.textContent()).resolves.toMatch(/Takes back the 50 points Carla Points .* got/);
    await rev.getByRole('button', { name: 'Take back 50 points' }).click();
    await expect.poll(() => rev.getByRole('alert').textContent()).toMatch(/Say why/);
    expect(await points(t, u.user_id)).toBe(50);
    await rev.getByLabel('Reason for the reversal').fill('given in error');
    await rev.getByRole('button', { name: 'Take back 50 points' }).click();
    await expect
      .poll(() => c.page.getByRole('status').allTextContents())
      .toContainEqual(expect.stringContaining('Took back 50 points from Carla Points'));
    expect(await points(t, u.user_id)).toBe(0);
    const history = await call('GET', `/loyalty/points/${u.user_id}/history`, { key: t.adminKey });
    expect(history.body.entries[0]).toMatchObject({ reason: 'reversal', amount: -50 });
    expect(history.body.entries[0].description).toContain('given in error');
    await expect.poll(() => c.page.locator('.balance').textContent()).toBe('0');
    await expect.poll(() => rows(c, 'Ledger entries, newest first').count()).toBe(2);
    await expect(rows(c, 'Ledger entries, newest first').nth(1).textContent()).resolves.toContain('reversed');
    await expect(c.page.getByRole('button', { name: /^Reverse / }).count()).resolves.toBe(0);
    expectNoProblems(c);
    await c.context.close();
  });

  it('shows a display name that looks like markup as that text, running nothing', async () => {
    const t = await newTenant();
    const evil = '<img src=x onerror=alert(1)>';
    const x = tag();
    const u = await member(t, `xss-${x}`, { display_name: evil });
    const c = await openConsole(browser(), t.adminKey);
    const dialogs: string[] = [];
    c.page.on('dialog', (d) => {
      dialogs.push(d.message());
      void d.dismiss();
    });
    const noImage = () => c.page.locator('main img[src="x"]').count();
    await visit(c, 'members', 'Members');
    await search(c, `xss-${x}`);
    await c.page.getByRole('link', { name: evil }).waitFor();
    expect(await noImage()).toBe(0);
    await c.page.getByRole('link', { name: evil }).click();
    await c.page.getByRole('heading', { level: 1, name: `Member ${evil}` }).waitFor();
    await expect.poll(() => c.page.getByText(evil, { exact: true }).first().isVisible()).toBe(true);
    expect(await noImage()).toBe(0);
    await c.page.waitForTimeout(300);
    expect(dialogs).toEqual([]);
    expect((await call('GET', `/api/users/${u.user_id}`, { key: t.adminKey })).body.user.display_name).toBe(evil);
    expectNoProblems(c);
    await c.context.close();
  });

  it("starts an export of the member's data and offers it as a download", async () => {
    const t = await newTenant();
    const u = await member(t, `exp-${tag()}`, { display_name: 'Dora Export' });
    const c = await openConsole(browser(), t.adminKey);
    await visit(c, `members/${u.user_id}`, 'Member Dora Export');
    await c.page.getByRole('button', { name: "Export the member's data" }).click();
    const link = c.page.getByRole('link', { name: /^Download the export/ });
    await link.waitFor({ timeout: 60_000 });
    const exportId = (await c.page.locator('.member-export code').textContent())!;
    const status = await call('GET', `/api/users/${u.user_id}/exports/${exportId}`, { key: t.adminKey });
    expect(status.body.export.status).toBe('ready');
    expect(await link.getAttribute('href')).toMatch(/^blob:/);
    expect(await link.getAttribute('download')).toBe(`${u.user_id}-${exportId}.zip`);
    const [download] = await Promise.all([c.page.waitForEvent('download'), link.click()]);
    const zip = fs.readFileSync((await download.path())!);
    expect(zip.subarray(0, 2).toString()).toBe('PK');
    expect(zip.includes(Buffer.from('manifest.json'))).toBe(true);
    expectNoProblems(c);
    await c.context.close();
  });

  it('erases a member once their idp_id is typed, after saying what the erasure does', async () => {
    const t = await newTenant();
    const u = await member(t, `gone-${tag()}`, { display_name: 'Erin Erase' });
    const c = await openConsole(browser(), t.adminKey);
    await visit(c, `members/${u.user_id}`, 'Member Erin Erase');
    await c.page.getByRole('button', { name: 'Erase this member…' }).click();
    const dialog = c.page.getByRole('dialog', { name: `Erase Erin Erase (${u.idp_id})?` });
    await dialog.waitFor();
    const text = await dialog.textContent();
    expect(text).toContain("This deletes the person's data and cannot be undone.");
    expect(text).toContain('keys are revoked');
    await expectAccessible(c, 'the erasure confirmation');
    // A wrong idp_id erases nothing.
    const typed = dialog.getByLabel(`Type the member's idp_id (${u.idp_id}) to confirm`);
    await typed.fill(`${u.idp_id}x`);
    await dialog.getByRole('button', { name: 'Erase the member' }).click();
    await expect.poll(() => dialog.getByRole('alert').textContent()).toMatch(/not this member's: nothing was erased/);
    expect((await call('GET', `/api/users/${u.user_id}`, { key: t.adminKey })).status).toBe(200);

    await typed.fill(u.idp_id);
    await dialog.getByLabel('Reason (optional)').fill('asked by the member');
    await dialog.getByRole('button', { name: 'Erase the member' }).click();
    await c.page.getByRole('heading', { level: 2, name: 'Erasure' }).waitFor();
    // The erasure's first step removes the member for every reader, moments after it began.
    await expect
      .poll(async () => (await call('GET', `/api/users/${u.user_id}`, { key: t.adminKey })).status, { timeout: 20_000 })
      .toBe(404);
    expect((await call('GET', `/api/users?q=${encodeURIComponent(u.idp_id)}`, { key: t.adminKey })).body.total).toBe(0);
    await expect
      .poll(
        async () => (await call('GET', `/api/users/${u.user_id}/erasure`, { key: t.adminKey })).body.erasure?.status,
        { timeout: 90_000, interval: 1000 },
      )
      .toBe('completed');
    await expect
      .poll(() => c.page.getByRole('main').textContent(), { timeout: 20_000 })
      .toMatch(/The member was erased on/);
    await expectAccessible(c, 'the erased member');
    expectNoProblems(c);
    await c.context.close();
  });

  it("fits a phone's width on a member's page", async () => {
    const t = await newTenant();
    const u = await member(t, `phone-${tag()}`, { display_name: 'Pat Phone' });
    const c = await openConsole(browser(), t.adminKey, { width: 390, height: 844 });
    await visit(c, `members/${u.user_id}`, 'Member Pat Phone');
    await expect.poll(() => rows(c, "The member's sessions, newest first").count()).toBe(1);
    const overflow = await c.page.evaluate(() => document.documentElement.scrollWidth - innerWidth);
    expect(overflow).toBeLessThanOrEqual(1);
    expectNoProblems(c);
    await c.context.close();
  });
});
