/**
 * The operator console in a real browser (test/console/): one Chromium per test file, a fresh
 * context (its own sessionStorage) per sign-in, and an accessibility check (axe-core) of what the
 * page shows. Errors the page logs or throws fail the test that saw them.
 */
import fs from 'node:fs';
import { createRequire } from 'node:module';

import type { Browser, BrowserContext, Page } from 'playwright-core';
import sharp from 'sharp';
import { afterAll, beforeAll, expect } from 'vitest';

import { edgeUrl } from './api.ts';
import { launchBrowser } from './browser.ts';

const AXE = fs.readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

export interface ConsolePage {
  page: Page;
  context: BrowserContext;
  /** what the page logged as an error or threw, and what CSP refused */
  problems: string[];
}

/** Starts Chromium for the file's tests; returns a getter (it exists once beforeAll ran). */
export function useBrowser(): () => Browser {
  let browser: Browser | undefined;
  beforeAll(async () => {
    browser = await launchBrowser();
  });
  afterAll(async () => {
    await browser?.close();
  });
  return () => browser!;
}

/** Opens the console in a new context; signs in with `key` when given. */
export async function openConsole(
  browser: Browser,
  key?: string,
  viewport = { width: 1280, height: 860 },
): Promise<ConsolePage> {
  const context = await browser.newContext({ viewport });
  const page = await context.newPage();
  const problems: string[] = [];
  page.on('console', (m) => {
    // The platform's refusals (4xx) show in the page as messages; the browser also logs them.
    if (m.type() === 'error' && !/Failed to load resource: the server responded with a status of 4\d\d/.test(m.text()))
      problems.push(`console: ${m.text()}`);
  });
  page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
  await page.goto(`${edgeUrl()}/console`);
  if (key) {
    await page.getByLabel('Admin API key').fill(key);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('navigation', { name: 'Console' }).waitFor();
  }
  return { page, context, problems };
}

/** Goes to a page of the console by its fragment (`members/usr_…`) and waits for its heading. */
export async function visit(c: ConsolePage, fragment: string, heading: string | RegExp): Promise<void> {
  await c.page.evaluate((f) => (location.hash = `#/${f}`), fragment);
  await c.page.getByRole('heading', { level: 1, name: heading }).waitFor();
}

/** axe-core's violations of WCAG 2.x A and AA on the page as it is now: none is expected. */
export async function expectAccessible(c: ConsolePage, what: string): Promise<void> {
  // Evaluated through the DevTools protocol, which the page's CSP does not govern.
  await c.page.evaluate(AXE);
  const violations = await c.page.evaluate(async () => {
    const axe = (
      globalThis as unknown as {
        axe: {
          run: (
            ctx: Document,
            opts: object,
          ) => Promise<{
            violations: { id: string; help: string; nodes: { target: string[] }[] }[];
          }>;
        };
      }
    ).axe;
    const r = await axe.run(document, { runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21aa'] } });
    return r.violations.map((v) => `${v.id}: ${v.help} (${v.nodes.map((n) => n.target.join(' ')).join(', ')})`);
  });
  expect(violations, `accessibility of ${what}`).toEqual([]);
}

/** Nothing logged as an error, thrown, or refused by the page's Content-Security-Policy. */
export function expectNoProblems(c: ConsolePage): void {
  expect(c.problems).toEqual([]);
}

/** A screenshot for docs/console.md, when CONSOLE_SCREENSHOTS names a directory (docs/console). */
export async function screenshot(c: ConsolePage, name: string): Promise<void> {
  const dir = process.env.CONSOLE_SCREENSHOTS;
  if (!dir) return;
  fs.mkdirSync(dir, { recursive: true });
  // Palette PNGs: a third of the size, the same to the eye, for pictures kept in the repository.
  const png = await c.page.screenshot({ fullPage: true });
  await sharp(png).png({ palette: true, quality: 90, compressionLevel: 9 }).toFile(`${dir}/${name}.png`);
}
