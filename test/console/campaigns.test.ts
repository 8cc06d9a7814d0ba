/**
 * The console's Campaigns & tiers page in Chromium: a campaign created through the form and read
 * back, started, edited, paused and ended (behind a confirmation); the dry run of an award; a
 * campaign's report with its budget burn; the platform's refusals shown as they are; tiers
 * edited and read back; each view checked by axe.
 */
import { describe, expect, it } from 'vitest';

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

const browser = useBrowser();
const HEADING = 'Campaigns & tiers';

const campaignOf = async (t: Tenant, id: string) =>
  (await call('GET', `/loyalty/campaigns/${id}`, { key: t.adminKey })).body;

/** A campaign created and started through the API, its start a minute ago. */
async function started(t: Tenant, json: Record<string, unknown>): Promise<string> {
  const c = await call('POST', '/loyalty/campaigns', {
    key: t.adminKey,
    json: { starts_at: new Date(Date.now() - 60_000).toISOString(), ...json },
  });
  expect(c.status, JSON.stringify(c.body)).toBe(201);
  const on = await call('PATCH', `/loyalty/campaigns/${c.body.campaign_id}`, {
    key: t.adminKey,
    json: { status: 'active' },
  });
  expect(on.body.status).toBe('active');
  return c.body.campaign_id as string;
}

const alertText = (c: ConsolePage) => c.page.getByRole('alert').first().textContent();
const statusText = (c: ConsolePage) => c.page.getByRole('status').first().textContent();

describe('console: campaigns', () => {
  it('creates a campaign through the form, then starts, edits, pauses and ends it', async () => {
    const t = await newTenant();
    const name = unique('Spring bonus');
    const c = await openConsole(browser(), t.adminKey);
    await visit(c, 'campaigns', HEADING);
    await c.page.getByText('No campaign yet').waitFor();
    const form = c.page.locator('form.campaign-form');
    await form.getByLabel('Name', { exact: true }).fill(name);
    await form.getByLabel('Effect').selectOption('bonus');
    await form.getByLabel('Points added').fill('15');
    await form.getByLabel('Budget (points)').fill('500');
    await form.getByLabel('Action types').fill('purchase, review');
    await form.getByLabel('Other conditions (JSON)').fill('{"min_amount": null, "nth": 2}');
    await c.page.getByRole('button', { name: 'Create draft' }).click();
    await expect.poll(() => statusText(c), { timeout: 20_000 }).toMatch(/created as a draft/);

    // The platform holds what the form said.
    const list = await call('GET', '/loyalty/campaigns', { key: t.adminKey });
    expect(list.body.campaigns).toHaveLength(1);
    const made = list.body.campaigns[0];
    expect(made).toMatchObject({
      name,
      status: 'draft',
      effect: { type: 'bonus', points: 15 },
      budget: 500,
      budget_left: 500,
      conditions: { action_types: ['purchase', 'review'], nth: 2 },
      stacking: 'stackable',
      ends_at: null,
    });
    const row = c.page.getByRole('row', { name: new RegExp(name) });
    await expect.poll(() => row.textContent()).toMatch(/draft.*\+15 points.*500 of 500/);
    await expectAccessible(c, 'the campaign list with a campaign and the form');
    await screenshot(c, 'campaigns-list');

    // The status filter asks the platform for that status only.
    await c.page.getByLabel('Status').selectOption('active');
    await c.page.getByText('No active campaign.').waitFor();
    await c.page.getByLabel('Status').selectOption('draft');
    await row.waitFor();

    await row.getByRole('link', { name }).click();
    await c.page.getByRole('heading', { level: 2, name: `Campaign: ${name}` }).waitFor();
    await c.page.getByRole('button', { name: 'Start' }).click();
    await expect.poll(() => statusText(c), { timeout: 20_000 }).toMatch(/Campaign started/);
    expect((await campaignOf(t, made.campaign_id)).status).toBe('active');

    // An edit of a started campaign makes version 2 and changes only what was edited.
    const edit = c.page.locator('form.campaign-form');
    await edit.getByLabel('Points added').fill('20');
    await c.page.getByRole('button', { name: 'Save changes' }).click();
    await expect.poll(() => statusText(c), { timeout: 20_000 }).toMatch(/Changes saved/);
    const edited = await campaignOf(t, made.campaign_id);
    expect(edited).toMatchObject({ version: 2, effect: { type: 'bonus', points: 20 }, name, budget: 500 });
    expect(edited.versions[0]).toMatchObject({ version: 1, campaign: { effect: { points: 15 } } });

    await c.page.getByRole('button', { name: 'Pause' }).click();
    await expect.poll(() => statusText(c), { timeout: 20_000 }).toMatch(/Campaign paused/);
    expect((await campaignOf(t, made.campaign_id)).status).toBe('paused');
    await c.page.getByRole('button', { name: 'Resume' }).waitFor();

    // Ending asks first: cancelling changes nothing.
    await c.page.getByRole('button', { name: 'End', exact: true }).click();
    const dialog = c.page.getByRole('dialog', { name: 'End this campaign?' });
    await dialog.waitFor();
    expect(await dialog.textContent()).toContain(name);
    await expectAccessible(c, 'the end confirmation');
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    expect((await campaignOf(t, made.campaign_id)).status).toBe('paused');
    await c.page.getByRole('button', { name: 'End', exact: true }).click();
    await dialog.getByRole('button', { name: 'End campaign' }).click();
    await expect.poll(() => statusText(c), { timeout: 20_000 }).toMatch(/Campaign ended/);
    expect((await campaignOf(t, made.campaign_id)).status).toBe('ended');
    // An ended campaign offers no move and no edit.
    await expect
      .poll(() => c.page.getByRole('button', { name: /Pause|Resume|Save changes/ }).count(), { timeout: 20_000 })
      .toBe(0);
    expectNoProblems(c);
    await c.context.close();
  });

  it('dry-runs an award: the base, each campaign and the total, and writes nothing', async () => {
    const t = await newTenant();
    const u = await basicUser(t);
    const bonus = unique('Double');
    await started(t, { name: bonus, effect: { type: 'bonus', points: 7 }, conditions: { action_types: ['purchase'] } });
    const other = await started(t, {
      name: unique('Reviews'),
      effect: { type: 'bonus', points: 3 },
      conditions: { action_types: ['review'] },
    });
    const c = await openConsole(browser(), t.adminKey);
    await visit(c, 'campaigns/dry-run', HEADING);
    await c.page.getByLabel('Member').fill(u.idp_id);
    await c.page.getByLabel('Action', { exact: true }).fill('purchase');
    await c.page.getByRole('button', { name: 'Evaluate' }).click();
    // purchase gives 10 by default, the campaign 7 more
    await expect.poll(() => statusText(c), { timeout: 20_000 }).toMatch(/would credit 17 points/);
    const lines = c.page.getByRole('table', { name: 'How the points are made' });
    expect(await lines.getByRole('row', { name: new RegExp(bonus) }).textContent()).toContain('7');
    expect(await lines.getByRole('row', { name: /Base/ }).textContent()).toContain('10');
    const missed = c.page.getByRole('table', { name: 'Running campaigns that would not apply' });
    expect(await missed.getByRole('row', { name: new RegExp(other) }).textContent()).toContain('another action');
    await expectAccessible(c, 'the dry run with its result');
    // Nothing was awarded.
    expect((await call('GET', `/loyalty/points/${u.user_id}`, { key: t.adminKey })).status).toBe(404);
    // An unknown member: the platform's message.
    await c.page.getByLabel('Member').fill('nobody-here');
    await c.page.getByRole('button', { name: 'Evaluate' }).click();
    await expect.poll(() => alertText(c), { timeout: 20_000 }).toMatch(/User not found: nobody-here/);
    expectNoProblems(c);
    await c.context.close();
  });

  it("charts a campaign's budget burn from its report", async () => {
    const t = await newTenant();
    const name = unique('Budgeted');
    const id = await started(t, { name, effect: { type: 'bonus', points: 30 }, budget: 100 });
    for (const u of [await basicUser(t), await basicUser(t)]) {
      const a = await call('POST', `/loyalty/award-points/${u.idp_id}`, {
        key: t.adminKey,
        json: { action_type: 'purchase' },
      });
      expect(a.body.points_awarded).toBe(40);
    }
    // The report's sums are written about once a second.
    await until(
      'the report',
      () => call('GET', `/loyalty/campaigns/${id}/report`, { key: t.adminKey }),
      (r) => r.body.points_given === 60 && r.body.members_reached === 2,
      20_000,
    );
    const c = await openConsole(browser(), t.adminKey);
    await visit(c, `campaigns/c/${id}`, HEADING);
    const figure = c.page.getByRole('figure', { name: 'Budget burn' });
    await figure.waitFor();
    expect(await figure.locator('canvas').count()).toBeGreaterThan(0);
    await figure.getByText('The numbers').click();
    // From the start (all of the budget left) to today: given to date, and left.
    const rows = figure.getByRole('table', { name: 'Budget burn' }).locator('tbody tr');
    expect(await rows.count()).toBe(2);
    expect((await rows.first().locator('td').allTextContents()).slice(1)).toEqual(['0', '100']);
    expect((await rows.last().locator('td').allTextContents()).slice(1)).toEqual(['60', '40']);
    const facts = await c.page.locator('dl.facts').nth(1).textContent();
    expect(facts).toMatch(/Points given60/);
    expect(facts).toMatch(/Members reached2/);
    expect(facts).toMatch(/Budget left40/);
    await expectAccessible(c, 'a campaign with its report');
    await screenshot(c, 'campaigns-report');
    expectNoProblems(c);
    await c.context.close();
  });

  it("shows the platform's refusals: an end before the start, a move an ended campaign cannot make", async () => {
    const t = await newTenant();
    const c = await openConsole(browser(), t.adminKey);
    await visit(c, 'campaigns', HEADING);
    const form = c.page.locator('form.campaign-form');
    await form.getByLabel('Name', { exact: true }).fill('Backwards');
    await form.getByLabel('Starts').fill('2030-06-10T10:00');
    await form.getByLabel('Ends').fill('2030-06-01T10:00');
    await form.getByLabel('Points added').fill('5');
    // JSON that does not parse is caught before anything is sent.
    await form.getByLabel('Other conditions (JSON)').fill('{"nth": 2');
    await c.page.getByRole('button', { name: 'Create draft' }).click();
    await expect.poll(() => alertText(c)).toMatch(/Other conditions: not valid JSON/);
    await form.getByLabel('Other conditions (JSON)').fill('{}');
    await c.page.getByRole('button', { name: 'Create draft' }).click();
    await expect.poll(() => alertText(c), { timeout: 20_000 }).toMatch(/ends_at.*after starts_at/);
    await expectAccessible(c, 'the form with a refusal');
    expect((await call('GET', '/loyalty/campaigns', { key: t.adminKey })).body.campaigns).toEqual([]);

    // The page shows a running campaign that someone else ends meanwhile: pausing it is refused.
    const id = await started(t, { name: 'Ended elsewhere', effect: { type: 'bonus', points: 5 } });
    await visit(c, `campaigns/c/${id}`, HEADING);
    await c.page.getByRole('button', { name: 'Pause' }).waitFor();
    const end = await call('PATCH', `/loyalty/campaigns/${id}`, { key: t.adminKey, json: { status: 'ended' } });
    expect(end.body.status).toBe('ended');
    await c.page.getByRole('button', { name: 'Pause' }).click();
    await expect.poll(() => alertText(c), { timeout: 20_000 }).toMatch(/An ended campaign cannot be changed \(409\)/);
    expect((await campaignOf(t, id)).status).toBe('ended');
    expectNoProblems(c);
    await c.context.close();
  });
});

describe('console: tiers', () => {
  it('edits the tiers and their window through the form, read back from the platform', async () => {
    const t = await newTenant();
    const c = await openConsole(browser(), t.adminKey);
    await visit(c, 'campaigns/tiers', HEADING);
    await c.page.getByText('No tiers yet').waitFor();
    await c.page.getByRole('button', { name: 'Add a tier' }).click();
    await c.page.getByRole('button', { name: 'Add a tier' }).click();
    const first = c.page.getByRole('group', { name: 'Tier 1' });
    const second = c.page.getByRole('group', { name: 'Tier 2' });
    const qualifying = c.page.getByRole('group', { name: 'Qualifying window' });
    await first.getByLabel('Tier id').fill('silver');
    await first.getByLabel('Name').fill('Silver');
    await first.getByLabel('Threshold').fill('100');
    await first.getByLabel('Multiplier').fill('1.5');
    await second.getByLabel('Tier id').fill('Gold!');
    await second.getByLabel('Name').fill('Gold');
    await second.getByLabel('Threshold').fill('1000');
    await second.getByLabel('Multiplier').fill('2');
    await qualifying.getByRole('combobox', { name: /^Window/ }).selectOption('rolling_months');
    await qualifying.getByRole('spinbutton', { name: /^Months/ }).fill('6');
    await qualifying.getByLabel('Grace days').fill('14');
    // A tier id the platform refuses: its message, nothing saved.
    await c.page.getByRole('button', { name: 'Save tiers' }).click();
    await expect.poll(() => alertText(c), { timeout: 20_000 }).toMatch(/tier_id/);
    expect((await call('GET', '/loyalty/tiers', { key: t.adminKey })).body.tiers).toEqual([]);
    await second.getByLabel('Tier id').fill('gold');
    await c.page.getByRole('button', { name: 'Save tiers' }).click();
    await expect.poll(() => statusText(c), { timeout: 20_000 }).toMatch(/Tiers saved/);
    const saved = (await call('GET', '/loyalty/tiers', { key: t.adminKey })).body;
    expect(saved).toMatchObject({
      tiers: [
        { tier_id: 'silver', name: 'Silver', threshold: 100, multiplier: '1.5', unlocks: [] },
        { tier_id: 'gold', name: 'Gold', threshold: 1000, multiplier: '2', unlocks: [] },
      ],
      window: { type: 'rolling_months', months: 6 },
      grace_days: 14,
    });
    const table = c.page.getByRole('table', { name: /Tiers, lowest threshold first/ });
    await expect.poll(() => table.getByRole('row', { name: /Gold/ }).textContent()).toMatch(/1,000/);

    // Editing the saved set: the form starts from it; a removed tier goes.
    await c.page.getByRole('group', { name: 'Tier 1' }).getByLabel('Threshold').fill('250');
    await c.page.getByRole('button', { name: 'Remove tier 2' }).click();
    await qualifying.getByRole('combobox', { name: /^Window/ }).selectOption('calendar_year');
    await c.page.getByRole('button', { name: 'Save tiers' }).click();
    await expect
      .poll(async () => (await call('GET', '/loyalty/tiers', { key: t.adminKey })).body, { timeout: 20_000 })
      .toMatchObject({ tiers: [{ tier_id: 'silver', threshold: 250 }], window: { type: 'calendar_year' } });
    expect((await call('GET', '/loyalty/tiers', { key: t.adminKey })).body.tiers).toHaveLength(1);
    await expect.poll(() => table.textContent()).not.toMatch(/Gold/);
    await expectAccessible(c, 'the tiers and their form');
    await screenshot(c, 'tiers');
    expectNoProblems(c);
    await c.context.close();
  });

  it("fits a phone's width: a campaign's report and the tiers", async () => {
    const t = await newTenant();
    const id = await started(t, { name: 'Phone', effect: { type: 'bonus', points: 5 }, budget: 50 });
    const c = await openConsole(browser(), t.adminKey, { width: 390, height: 844 });
    for (const [fragment, what] of [
      ['campaigns', 'the list'],
      [`campaigns/c/${id}`, 'a campaign'],
      ['campaigns/tiers', 'the tiers'],
    ]) {
      await visit(c, fragment, HEADING);
      await c.page.getByRole('heading', { level: 2 }).first().waitFor();
      const overflow = await c.page.evaluate(() => document.documentElement.scrollWidth - innerWidth);
      expect(overflow, what).toBeLessThanOrEqual(1);
    }
    expectNoProblems(c);
    await c.context.close();
  });
});
