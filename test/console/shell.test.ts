/**
 * The console's shell in Chromium: what the edge serves (CSP, cache), signing in and out, the
 * navigation with the review counts, a system admin picking an organization, a phone's width.
 */
import { describe, expect, it } from 'vitest';

import { adminKey, basicUser, call, newTenant } from '../helpers/api.ts';
import { expectAccessible, expectNoProblems, openConsole, screenshot, useBrowser, visit } from '../helpers/console.ts';

const browser = useBrowser();

describe('console: what the edge serves', () => {
  it('serves the page with a strict Content-Security-Policy and its assets by content hash', async () => {
    const page = await call('GET', '/console');
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toMatch(/text\/html/);
    const csp = page.headers.get('content-security-policy')!;
    expect(csp).toContain("default-src 'none'");
    expect(csp).toContain("script-src 'self'");
    expect(csp).not.toMatch(/unsafe-inline|unsafe-eval/);
    expect(csp).toContain("frame-ancestors 'none'");
    const html = page.raw.toString();
    expect(html).not.toMatch(/<script>/); // no inline script
    const assets = [...html.matchAll(/\/console\/assets\/([\w.-]+)/g)].map((m) => m[1]);
    expect(assets).toHaveLength(2);
    for (const name of assets) {
      const res = await call('GET', `/console/assets/${name}`);
      expect(res.status).toBe(200);
      expect(res.headers.get('cache-control')).toContain('immutable');
    }
    const missing = await call('GET', '/console/assets/nope.js');
    expect(missing.status).toBe(404);
  });
});

describe('console: signing in', () => {
  it('refuses a basic key with a clear message and keeps nothing', async () => {
    const t = await newTenant();
    const user = await basicUser(t);
    const c = await openConsole(browser());
    await c.page.getByLabel('Admin API key').fill(user.key);
    await c.page.getByRole('button', { name: 'Sign in' }).click();
    await expect.poll(() => c.page.getByRole('alert').textContent()).toMatch(/not an admin key/);
    expect(await c.page.evaluate(() => sessionStorage.length)).toBe(0);
    await expectAccessible(c, 'the sign-in page with an error');
    await c.context.close();
  });

  it('signs in with an admin key held in the tab only, shows the review counts, and signs out', async () => {
    const t = await newTenant();
    const c = await openConsole(browser(), t.adminKey);
    // The key is in this tab's sessionStorage, never in the URL or a cookie.
    expect(c.page.url()).not.toContain(t.adminKey);
    expect(await c.context.cookies()).toEqual([]);
    expect(await c.page.evaluate(() => sessionStorage.getItem('console.key'))).toBe(t.adminKey);
    await expect.poll(() => c.page.getByRole('main').textContent()).toMatch(/0 redemptions to settle/);
    await expect(c.page.getByRole('main').textContent()).resolves.toMatch(/0 scans to validate/);
    await expect(c.page.getByText(t.organization_id)).toBeTruthy();
    await screenshot(c, 'today');
    await expectAccessible(c, 'the landing page');
    // A reload keeps the session (same tab); a new tab starts signed out.
    await c.page.reload();
    await c.page.getByRole('navigation', { name: 'Console' }).waitFor();
    const other = await c.context.newPage();
    await other.goto(c.page.url());
    await other.getByLabel('Admin API key').waitFor();
    await c.page.getByRole('button', { name: 'Sign out' }).click();
    await c.page.getByLabel('Admin API key').waitFor();
    expect(await c.page.evaluate(() => sessionStorage.length)).toBe(0);
    expectNoProblems(c);
    await c.context.close();
  });

  it('lets a system admin act in an organization it names, and says so when it does not exist', async () => {
    const t = await newTenant();
    const c = await openConsole(browser(), adminKey());
    await c.page.getByLabel('Organization').fill('org_does_not_exist');
    await c.page.getByRole('button', { name: 'Act in it' }).click();
    await expect.poll(() => c.page.getByRole('alert').first().textContent()).toMatch(/not found|No organization/i);
    await c.page.getByLabel('Organization').fill(t.organization_id);
    await c.page.getByRole('button', { name: 'Act in it' }).click();
    await expect.poll(() => c.page.locator('.who').textContent()).toContain(t.organization_id);
    await c.context.close();
  });

  it("acts in the organization a system admin picked: an award's body names it, and nothing lands in the admin's own", async () => {
    const t = await newTenant();
    const member = await basicUser(t);
    const c = await openConsole(browser(), adminKey());
    await c.page.getByLabel('Organization').fill(t.organization_id);
    await c.page.getByRole('button', { name: 'Act in it' }).click();
    await expect.poll(() => c.page.locator('.who').textContent()).toContain(t.organization_id);
    // The member page reads with organization_id in the query; the award sends it in its body.
    await visit(c, `members/${member.user_id}`, /^Member /);
    await c.page.getByLabel('Action', { exact: true }).selectOption('profile_completed');
    await c.page.getByLabel(/^Reason/).fill('for org B');
    await c.page.getByRole('button', { name: 'Award points…' }).click();
    await c.page
      .getByRole('dialog', { name: 'Award 50 points' })
      .getByRole('button', { name: 'Award 50 points' })
      .click();
    await expect
      .poll(() => c.page.getByRole('status').allTextContents())
      .toContainEqual(expect.stringContaining('Awarded 50 points'));
    const balance = await call('GET', `/loyalty/points/${member.user_id}`, { key: t.adminKey });
    expect(balance.body.points).toBe(50);
    // The system admin's own organization has no such member (it would have been created there).
    const home = await call('GET', `/api/users/${member.idp_id}`, { key: adminKey() });
    expect(home.status).toBe(404);
    expectNoProblems(c);
    await c.context.close();
  });

  it("fits a phone's width: the navigation becomes a top bar, the pages stay usable", async () => {
    const t = await newTenant();
    const c = await openConsole(browser(), t.adminKey, { width: 390, height: 844 });
    await visit(c, 'members', /Members/);
    const overflow = await c.page.evaluate(() => document.documentElement.scrollWidth - innerWidth);
    expect(overflow).toBeLessThanOrEqual(1);
    await screenshot(c, 'phone-members');
    await c.context.close();
  });
});
