/**
 * `npm run check:docs`: opens the API reference (/docs) in headless Chromium and checks what a
 * user does with it: every operation of /openapi.json is on the page, the filter finds one, the
 * key goes into the Authorize dialog, and "Execute" of an operation answers 200 with that key.
 * Every operation is then opened in turn and compared with the document: its success answer
 * shows the named answer schema with its properties (a file answer: its media types and
 * `binary`), a JSON request body its schema with its properties, a multipart one its form
 * fields, and each documented parameter its row; no "Resolver error" or "Could not resolve
 * reference" anywhere. "Try it" also runs POST /text/similar with an edited JSON body (2xx, the
 * answer shown) and, after logging out in the Authorize dialog, GET /loyalty/rules (401).
 * No page error and no Content-Security-Policy violation is allowed (but that expected 401,
 * which Chromium logs as a network error). Screenshots are written to DOCS_CHECK_OUT (default: a
 * temp directory) and their paths printed; those of "Try it" show the key in the curl line.
 *
 * It starts its own platform on free ports, or uses a running one: DOCS_CHECK_URL (the edge)
 * with DOCS_CHECK_KEY (any key). Chromium is CHROMIUM, else `chromium`, `chromium-browser` or
 * `google-chrome` on PATH (Debian: `apt-get install chromium`), driven by playwright-core, which
 * never downloads a browser of its own (test/helpers/browser.ts).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import type { Browser, Page as PlaywrightPage } from 'playwright-core';

import { launchBrowser } from './helpers/browser.ts';

type Json = Record<string, any>;

/**
 * The page as the checks use it, on playwright's Page. Expressions are evaluated by
 * page.evaluate and polled from here: page.waitForFunction evaluates a string with eval() inside
 * the page, which the page's Content-Security-Policy (no 'unsafe-eval') refuses.
 */
class Page {
  readonly problems: string[] = [];
  constructor(readonly page: PlaywrightPage) {
    page.on('pageerror', (err) => this.problems.push(`page error: ${err.stack ?? err.message}`));
    page.on('console', (msg) => {
      if (msg.type() !== 'error') return;
      // Without arguments it is the browser's own entry (network, security: CSP), else console.error.
      if (!msg.args().length) this.problems.push(`console: ${msg.text()}`);
      else this.problems.push(`console.error: ${msg.text()}`);
    });
  }

  async eval<T = unknown>(expression: string): Promise<T> {
    try {
      return (await this.page.evaluate(expression)) as T;
    } catch (err) {
      throw new Error(`evaluating ${expression.slice(0, 80)}: ${(err as Error).message}`);
    }
  }

  /** Polls an expression until it is truthy. */
  async waitFor<T>(expression: string, what: string, timeoutMs = 30_000): Promise<T> {
    const until = Date.now() + timeoutMs;
    for (;;) {
      const v = await this.eval<T>(`((v) => (v instanceof Node ? true : v))(${expression})`);
      if (v) return v;
      if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
      await new Promise((r) => setTimeout(r, 200));
    }
  }

  /** Clicks the first element at `selector` with the mouse, once it is visible, stable and enabled. */
  async click(selector: string) {
    try {
      await this.page.locator(selector).first().click({ timeout: 15_000 });
    } catch (err) {
      throw new Error(`nothing to click at ${selector}: ${(err as Error).message.split('\n')[0]}`);
    }
  }

  /** Types into an input the way a user does (React sees real input events). */
  async type(selector: string, text: string) {
    await this.page.locator(selector).first().focus();
    await this.page.keyboard.insertText(text);
  }

  async screenshot(file: string, fullPage = false) {
    if (fullPage) {
      const [width, height] = await this.eval<[number, number]>(
        '[document.documentElement.scrollWidth, document.documentElement.scrollHeight]',
      );
      await this.page.screenshot({
        path: file,
        fullPage: true,
        clip: { x: 0, y: 0, width, height: Math.min(height, 16_000) },
      });
    } else await this.page.screenshot({ path: file });
    console.log(`  screenshot: ${file}`);
  }
}

async function openBrowser(): Promise<{ browser: Browser; page: Page }> {
  const browser = await launchBrowser();
  const context = await browser.newContext({ viewport: { width: 1366, height: 900 }, deviceScaleFactor: 1 });
  return { browser, page: new Page(await context.newPage()) };
}

function check(ok: unknown, message: string) {
  if (!ok) throw new Error(`check failed: ${message}`);
  console.log(`  ok: ${message}`);
}

/** Scrolls the (virtual) list of operations until `selector` is on the page. */
async function reveal(page: Page, selector: string): Promise<void> {
  await page.eval('window.scrollTo(0, 0)');
  for (let i = 0; i < 1000; i += 1) {
    if (await page.eval<boolean>(`!!document.querySelector(${JSON.stringify(selector)})`)) {
      await page.eval(`document.querySelector(${JSON.stringify(selector)}).scrollIntoView({ block: 'center' })`);
      await new Promise((r) => setTimeout(r, 100));
      return;
    }
    await page.eval('window.scrollBy(0, 500)');
    await new Promise((r) => setTimeout(r, 60));
  }
  throw new Error(`${selector} never came into view`);
}

/** What an operation of /openapi.json must show once opened (see `OPEN_AND_LOOK`). */
interface Expected {
  label: string; // "GET /path"
  id: string; // the element id Swagger UI gives its block
  code: string; // the documented success answer (the first 2xx)
  media: string[]; // its media types
  model?: string; // the named answer schema (components.schemas through $ref)
  modelFields: string[]; // that schema's properties
  binary: boolean; // a file answer: `type: string, format: binary`
  body?: 'json' | 'form';
  bodyFields: string[]; // the request body's properties (JSON) or form fields (multipart)
  params: string[]; // "name in query"
}

function expectations(doc: Json): Expected[] {
  const named = (schema: Json | undefined) =>
    typeof schema?.$ref === 'string' ? (schema.$ref as string).split('/').pop() : undefined;
  return Object.entries<Json>(doc.paths).flatMap(([p, ops]) =>
    Object.entries<Json>(ops).map(([m, op]) => {
      const code = Object.keys(op.responses ?? {}).find((c) => c.startsWith('2')) ?? '';
      const content = (op.responses?.[code]?.content ?? {}) as Json;
      const schemas = Object.values<Json>(content).map((c) => c.schema as Json | undefined);
      const model = schemas.map(named).find(Boolean);
      const reqContent = (op.requestBody?.content ?? {}) as Json;
      const body = reqContent['application/json'] ? 'json' : reqContent['multipart/form-data'] ? 'form' : undefined;
      const reqSchema = (reqContent['application/json'] ?? reqContent['multipart/form-data'])?.schema as
        Json | undefined;
      return {
        label: `${m.toUpperCase()} ${p}`,
        id: `operations-${op.tags[0].replace(/\s/g, '_')}-${op.operationId}`,
        code,
        media: Object.keys(content),
        model,
        modelFields: Object.keys((model ? doc.components.schemas[model]?.properties : undefined) ?? {}),
        binary: !model && schemas.some((s) => s?.type === 'string' && s?.format === 'binary'),
        body,
        bodyFields: Object.keys(reqSchema?.properties ?? {}),
        params: ((op.parameters ?? []) as Json[]).map((x) => `${x.name} in ${x.in}`),
      } satisfies Expected;
    }),
  );
}

/**
 * In the page: opens one operation (already in the DOM), shows the Schema tab of its success
 * answer and of its JSON request body, reads what is rendered, and collapses it again so the
 * page stays small. It polls in the page every 20 ms: page.waitFor's 200 ms round trips from
 * here would add seconds over 150 operations.
 */
const OPEN_AND_LOOK = `window.__openAndLook = async (id, code, body) => {
  const block = () => document.getElementById(id);
  const q = (s) => block()?.querySelector(s);
  const until = async (f, ms) => { const end = performance.now() + ms; for (;;) { const v = f(); if (v || performance.now() > end) return v; await new Promise((r) => setTimeout(r, 20)); } };
  if (!block()) return null;
  block().scrollIntoView({ block: 'start' });
  if (!block().classList.contains('is-open')) q('.opblock-summary-control').click();
  if (!(await until(() => q('.responses-wrapper'), 15000))) return { opened: false };
  const res = 'tr.response[data-code="' + code + '"]';
  const reqBody = '.opblock-section-request-body';
  q(res + ' button[data-name="model"]')?.click();
  if (body === 'json') q(reqBody + ' button[data-name="model"]')?.click();
  await until(() => (!q(res) || q(res + ' .model-box article')) && (body !== 'json' || q(reqBody + ' .model-box article')), 5000);
  const texts = (s) => [...block().querySelectorAll(s)].map((e) => e.textContent.trim());
  const head = (level) => ' .model-box article[data-json-schema-level="' + level + '"] > .json-schema-2020-12-head ';
  const seen = {
    opened: true,
    row: !!q(res),
    media: [...block().querySelectorAll(res + ' .response-control-media-type select option')].map((o) => o.value),
    model: !!q(res + ' .model-box article'),
    title: q(res + head(0) + '.json-schema-2020-12__title')?.textContent.trim() ?? null,
    modelFields: texts(res + head(1) + '.json-schema-2020-12__title'),
    binary: texts(res + head(0) + '.json-schema-2020-12__constraint').includes('binary'),
    bodyModel: !!q(reqBody + ' .model-box article'),
    bodyFields: body === 'json' ? texts(reqBody + head(1) + '.json-schema-2020-12__title') : [...block().querySelectorAll(reqBody + ' tr.parameters[data-property-name]')].map((t) => t.dataset.propertyName),
    params: [...block().querySelectorAll('.parameters-container tr[data-param-name]')].map((t) => t.dataset.paramName + ' in ' + t.dataset.paramIn),
    resolverError: /Resolver error|Could not resolve reference/i.test(block().textContent),
  };
  q('.opblock-summary-control').click();
  await until(() => !block()?.classList.contains('is-open'), 5000);
  return seen;
};`;

type Seen =
  | { opened: false }
  | {
      opened: true;
      row: boolean;
      media: string[];
      model: boolean;
      title: string | null;
      modelFields: string[];
      binary: boolean;
      bodyModel: boolean;
      bodyFields: string[];
      params: string[];
      resolverError: boolean;
    };

/**
 * Opens every operation of the document on the page, one after the other in page order while
 * scrolling through the virtual list once, and compares what renders with the document.
 */
async function openEveryOperation(page: Page, expected: Expected[]) {
  await page.eval(OPEN_AND_LOOK);
  const pending = new Map(expected.map((e) => [e.id, e]));
  const seen = new Map<string, Seen>();
  await page.eval('window.scrollTo(0, 0)');
  // The first operation not yet seen among those in the DOM is opened (at the top of the view,
  // so the next ones are rendered below it); when none is left in the DOM, the page scrolls on.
  const inDom = `[...document.querySelectorAll('.opblock')].map(b => b.id)`;
  for (let i = 0, still = 0; i < 5000 && pending.size && still < 3; i += 1) {
    const e = (await page.eval<string[]>(inDom)).map((id) => pending.get(id)).find(Boolean);
    const r =
      e &&
      (await page.eval<Seen | null>(
        `window.__openAndLook(${JSON.stringify(e.id)}, ${JSON.stringify(e.code)}, ${JSON.stringify(e.body ?? null)})`,
      ));
    if (e && r) {
      seen.set(e.id, r);
      pending.delete(e.id);
      still = 0;
      continue;
    }
    const atEnd = await page.eval<boolean>(
      'window.scrollY + window.innerHeight >= document.documentElement.scrollHeight - 2',
    );
    still = atEnd ? still + 1 : 0;
    await page.eval('window.scrollBy(0, 600)');
    await new Promise((r) => setTimeout(r, 60));
  }
  await page.eval('window.scrollTo(0, 0)');
  return { seen, never: [...pending.values()].map((e) => e.label) };
}

/**
 * Clicks an operation's Execute until the page has sent the request (seen in the page's resource
 * timing), then waits for the answer it shows. Swagger UI renders Execute before the operation's
 * resolved definition reaches the block, and the block is not drawn again when it arrives; a click
 * then sends nothing (the console says "Operation … not found"). A user presses Cancel and Try it
 * out and clicks again, as this does.
 */
async function execute(page: Page, block: string, apiPath: string, what: string): Promise<string> {
  const sent = `performance.getEntriesByType('resource').filter(e => new URL(e.name).pathname === ${JSON.stringify(apiPath)}).length`;
  const before = await page.eval<number>(sent);
  const problems = page.problems.length;
  for (let attempt = 0; ; attempt += 1) {
    await page.click(`${block} .execute`);
    try {
      await page.waitFor(`${sent} > ${before}`, `the request of ${what}`, 5_000);
      break;
    } catch (err) {
      if (attempt >= 3) throw err;
    }
    // Cancel and Try it out again: the block renders anew, now with the resolved definition.
    await page.click(`${block} .try-out__btn`);
    await page.waitFor(`!document.querySelector('${block} .execute')`, 'try-it-out to be off');
    await page.click(`${block} .try-out__btn`);
    await page.waitFor(`document.querySelector('${block} .execute')`, 'the Execute button again');
  }
  // The lost clicks' console errors are this retry's, not the page's.
  page.problems
    .splice(problems)
    .filter((p) => !/OperationNotFoundError/.test(p))
    .forEach((p) => page.problems.push(p));
  return page.waitFor<string>(
    `document.querySelector('${block} .live-responses-table tr.response .response-col_status')?.textContent.trim()`,
    what,
  );
}

/** The reference as a user meets it; throws on the first thing that does not work. */
async function checkDocs(base: string, key: string, out: string) {
  const doc = (await (await fetch(`${base}/openapi.json`)).json()) as Json;
  const operations = Object.entries<Json>(doc.paths).flatMap(([p, ops]) =>
    Object.keys(ops).map((m) => `${m.toUpperCase()} ${p}`),
  );
  const { browser, page } = await openBrowser();
  try {
    await page.page.goto(`${base}/docs`);
    await page.waitFor(`document.querySelector('.opblock')`, 'the operations to render');
    await page.waitFor(
      `window.ui.specSelectors.specResolvedSubtree(['paths', '/loyalty/rules', 'get'])`,
      'the operations to be resolved',
    );
    // From 150 tags and operations on, Swagger UI renders only those in view (a virtual list):
    // scroll through the page and collect each operation as it appears.
    const shown = new Set<string>();
    await page.eval('window.scrollTo(0, 0)');
    for (let i = 0, still = 0; i < 1000 && still < 3; i += 1) {
      const before = shown.size;
      for (const o of await page.eval<string[]>(
        `[...document.querySelectorAll('.opblock')].map(b => b.querySelector('.opblock-summary-method').textContent + ' ' + b.querySelector('.opblock-summary-path').getAttribute('data-path'))`,
      ))
        shown.add(o);
      const atEnd = await page.eval<boolean>(
        'window.scrollY + window.innerHeight >= document.documentElement.scrollHeight - 2',
      );
      still = atEnd && shown.size === before ? still + 1 : 0;
      await page.eval('window.scrollBy(0, 500)');
      await new Promise((r) => setTimeout(r, 60));
    }
    await page.eval('window.scrollTo(0, 0)');
    const missing = operations.filter((o) => !shown.has(o));
    check(
      !missing.length,
      `all ${operations.length} operations of /openapi.json are on the page${missing.length ? ` (missing: ${missing.join(', ')})` : ''}`,
    );
    check(
      await page.eval(
        `document.querySelector('.info .title')?.textContent.includes(${JSON.stringify(doc.info.title)})`,
      ),
      'the title is shown',
    );
    check(
      await page.eval(`!document.querySelector('.info .description').textContent.includes('\`')`),
      'the description is rendered Markdown (no literal backticks)',
    );
    check(
      await page.eval(`document.querySelectorAll('.info .description table tr').length > 5`),
      'the error table of the description is a table',
    );
    await page.screenshot(path.join(out, 'docs-1-overview.png'));

    // The filter narrows the list to a tag.
    await page.type('.operation-filter-input', 'gifts');
    await page.waitFor(`document.querySelectorAll('.opblock-tag-section').length === 1`, 'the filter to keep one tag');
    check(
      await page.eval(`document.querySelector('.opblock-tag-section h3').textContent.startsWith('gifts')`),
      'the filter finds the gifts operations',
    );
    await page.eval(`(() => { const i = document.querySelector('.operation-filter-input'); i.select(); })()`);
    await page.page.keyboard.press('Backspace');
    await page.waitFor(
      `document.querySelectorAll('.opblock-tag-section, .opblock-tag').length > 1`,
      'the filter to be cleared',
    );

    // Authorize with the key (the X-API-Key scheme).
    await page.click('.auth-wrapper .authorize');
    await page.waitFor(
      `document.querySelectorAll('.modal-ux .auth-container input').length >= 2`,
      'the Authorize dialog',
    );
    const schemes = await page.eval<string[]>(
      `[...document.querySelectorAll('.modal-ux .auth-container h4')].map(h => h.textContent)`,
    );
    check(
      schemes.some((s) => s.includes('bearer')) && schemes.some((s) => s.includes('apiKey')),
      `the dialog offers both schemes (${schemes.join(', ')})`,
    );
    const apiKeyBox = `[...document.querySelectorAll('.modal-ux .auth-container')].find(c => c.querySelector('h4').textContent.includes('apiKey'))`;
    await page.eval(`${apiKeyBox}.querySelector('input').setAttribute('data-check', 'api-key')`);
    await page.type('input[data-check="api-key"]', key);
    await page.screenshot(path.join(out, 'docs-2-authorize.png'));
    await page.eval(`${apiKeyBox}.querySelector('button.authorize').click()`);
    await page.waitFor(
      `${apiKeyBox}.querySelector('button[aria-label="Remove authorization"]')`,
      'the key to be accepted',
    );
    await page.click('.modal-ux .close-modal');

    // Try an operation: its answer comes back 200 with the key, and the page shows it.
    const target = doc.paths['/loyalty/rules'].get;
    const block = `#operations-${target.tags[0].replace(/\s/g, '_')}-${target.operationId}`;
    await reveal(page, block);
    await page.click(`${block} .opblock-summary-control`);
    await page.waitFor(`document.querySelector('${block} .execute')`, 'the Execute button (try-it-out is on)');
    const status = await execute(page, block, '/loyalty/rules', 'the live answer');
    check(status.startsWith('200'), `GET /loyalty/rules executed from the page answers ${status}`);
    const curl = await page.eval<string>(`document.querySelector('${block} .curl-command')?.textContent ?? ''`);
    check(curl.includes('X-API-Key'), 'the request carried the key as X-API-Key');
    check(
      await page.eval(
        `document.querySelector('${block} .live-responses-table').textContent.includes('referral_points')`,
      ),
      'the answer body is shown',
    );
    check(
      await page.eval(
        `!!document.querySelector('${block} .request-duration, ${block} .live-responses-table') && document.body.textContent.includes('Request duration')`,
      ),
      'the request duration is shown',
    );
    await page.eval(`document.querySelector('${block}').scrollIntoView()`);
    await page.screenshot(path.join(out, 'docs-3-try-it.png'));

    // An answer's schema is a named, shared model (components.schemas through $ref).
    const one = doc.paths['/api/gifts/gifts/{gift_id}'].get;
    const oneBlock = `#operations-gifts-${one.operationId}`;
    const schemaTab = `${oneBlock} tr.response[data-code="200"] button[data-name="model"]`;
    await reveal(page, oneBlock);
    await page.click(`${oneBlock} .opblock-summary-control`);
    await page.waitFor(`document.querySelector('${schemaTab}')`, 'the answer of GET /api/gifts/gifts/{gift_id}');
    await page.click(schemaTab);
    const answer = `${oneBlock} tr.response[data-code="200"] .model-box`;
    await page.waitFor(`document.querySelector('${answer}')`, 'the answer schema');
    await page.eval(
      `[...document.querySelectorAll('${answer} button')].filter(b => b.textContent === 'Expand all').forEach(b => b.click())`,
    );
    const titles = await page.waitFor<string[]>(
      `(t => t.length > 1 && t)([...document.querySelectorAll('${answer} .json-schema-2020-12__title')].map(e => e.textContent.trim()))`,
      'the expanded answer schema',
    );
    const answerName = `${one.operationId.charAt(0).toUpperCase()}${one.operationId.slice(1)}Response`;
    check(titles[0] === answerName, `the answer schema is the named ${answerName}`);
    await page.eval(`document.querySelector('${oneBlock} tr.response[data-code="200"]').scrollIntoView()`);
    await page.screenshot(path.join(out, 'docs-4-answer.png'));
    // Every operation renders with its schemas. Swagger UI resolves an operation's $refs when it
    // is first opened, one operation at a time, and on this document that takes seconds each (its
    // OpenAPI 3.1 resolver reads the whole document per operation): 150 would take minutes. So
    // the check asks Swagger UI, with its own action, to resolve all paths in one go first (the
    // two operations above were resolved the way a click does it), then opens each one.
    const expected = expectations(doc);
    const resolveStart = Date.now();
    await page.eval(`ui.specActions.requestResolvedSubtree(['paths'])`);
    const pairs = JSON.stringify(
      Object.entries<Json>(doc.paths).flatMap(([p, ops]) => Object.keys(ops).map((m) => [p, m])),
    );
    await page.waitFor(
      `((r) => r && ${pairs}.every(([p, m]) => r.getIn([p, m])))(ui.specSelectors.specResolvedSubtree(['paths']))`,
      'Swagger UI to resolve every operation',
      240_000,
    );
    const passStart = Date.now();
    const { seen, never } = await openEveryOperation(page, expected);
    console.log(
      `  (resolved in ${((passStart - resolveStart) / 1000).toFixed(1)} s, opened each in ${((Date.now() - passStart) / 1000).toFixed(1)} s)`,
    );
    const wrong = {
      open: [...never] as string[],
      answer: [] as string[],
      body: [] as string[],
      params: [] as string[],
      resolver: [] as string[],
    };
    const counts = { named: 0, binary: 0, json: 0, form: 0, params: 0, paramOps: 0 };
    const lacking = (want: string[], have: string[]) => want.filter((x) => !have.includes(x));
    for (const e of expected) {
      const r = seen.get(e.id);
      if (!r) continue; // in `never`
      if (!r.opened) {
        wrong.open.push(e.label);
        continue;
      }
      if (r.resolverError) wrong.resolver.push(e.label);
      if (!r.row) wrong.answer.push(`${e.label}: no ${e.code} answer`);
      else if (lacking(e.media, r.media).length || r.media.length !== e.media.length)
        wrong.answer.push(`${e.label}: media types ${r.media.join(', ')} instead of ${e.media.join(', ')}`);
      else if (e.model && r.title !== e.model)
        wrong.answer.push(`${e.label}: answer schema ${r.title ?? '(no title)'} instead of ${e.model}`);
      else if (e.model && lacking(e.modelFields, r.modelFields).length)
        wrong.answer.push(`${e.label}: ${e.model} lacks ${lacking(e.modelFields, r.modelFields).join(', ')}`);
      else if (e.binary && !r.binary) wrong.answer.push(`${e.label}: the binary answer is not shown as one`);
      else if (e.media.length && !r.model) wrong.answer.push(`${e.label}: no answer schema`);
      else if (e.model) counts.named += 1;
      else if (e.binary) counts.binary += 1;
      if (e.body === 'json' && !r.bodyModel) wrong.body.push(`${e.label}: no request body schema`);
      else if (e.body && lacking(e.bodyFields, r.bodyFields).length)
        wrong.body.push(`${e.label}: the request body lacks ${lacking(e.bodyFields, r.bodyFields).join(', ')}`);
      else if (e.body) counts[e.body] += 1;
      if (lacking(e.params, r.params).length)
        wrong.params.push(`${e.label}: ${lacking(e.params, r.params).join(', ')}`);
      else if (e.params.length) {
        counts.params += e.params.length;
        counts.paramOps += 1;
      }
    }
    const list = (xs: string[]) =>
      xs.length ? `; wrong: ${xs.slice(0, 10).join('; ')}${xs.length > 10 ? `; … (${xs.length} in all)` : ''}` : '';
    check(
      !wrong.open.length && seen.size === expected.length,
      `every operation opens on the page: ${seen.size - wrong.open.length} of ${expected.length}${list(wrong.open)}`,
    );
    const withModel = expected.filter((e) => e.model).length;
    const binaries = expected.filter((e) => e.binary).length;
    check(
      !wrong.answer.length && counts.named === withModel && counts.binary === binaries,
      `each success answer renders: ${counts.named} named answer schemas with their properties, ${counts.binary} binary answers with their media types${list(wrong.answer)}`,
    );
    const jsonBodies = expected.filter((e) => e.body === 'json').length;
    const forms = expected.filter((e) => e.body === 'form').length;
    check(
      !wrong.body.length && counts.json === jsonBodies && counts.form === forms,
      `each request body renders: ${counts.json} JSON body schemas with their properties, ${counts.form} multipart forms with their fields${list(wrong.body)}`,
    );
    check(
      !wrong.params.length,
      `the documented parameters render: ${counts.params} parameters of ${counts.paramOps} operations${list(wrong.params)}`,
    );
    const resolverErrors = await page.eval<string[]>(
      `[...ui.errSelectors.allErrors().toJS().map(e => e.message ?? String(e)), ...(/Resolver error|Could not resolve reference/i.test(document.body.textContent) ? ['on the page'] : [])]`,
    );
    check(
      !wrong.resolver.length && !resolverErrors.length,
      `no 'Resolver error' or 'Could not resolve reference' in any operation or on the page${list([...wrong.resolver, ...resolverErrors])}`,
    );

    // An opened operation with its schemas, then "Try it" with a JSON body. POST /text/similar
    // (`audit: false`) only reads: it embeds the query and ranks the caller's stored texts.
    const post = doc.paths['/text/similar'].post;
    const postBlock = `#operations-${post.tags[0].replace(/\s/g, '_')}-${post.operationId}`;
    await reveal(page, postBlock);
    await page.click(`${postBlock} .opblock-summary-control`);
    await page.waitFor(`document.querySelector('${postBlock} .responses-wrapper')`, 'POST /text/similar to open');
    await page.eval(
      `document.querySelectorAll('${postBlock} .opblock-section-request-body button[data-name="model"], ${postBlock} tr.response[data-code="200"] button[data-name="model"]').forEach(b => b.click())`,
    );
    await page.waitFor(
      `document.querySelector('${postBlock} .opblock-section-request-body .model-box') && document.querySelector('${postBlock} tr.response[data-code="200"] .model-box')`,
      'the request and answer schemas of POST /text/similar',
    );
    await page.eval(`document.querySelector('${postBlock}').scrollIntoView()`);
    await page.screenshot(path.join(out, 'docs-7-operation.png'));
    const editor = `${postBlock} textarea.body-param__text`;
    await page.click(`${postBlock} .opblock-section-request-body button[data-name="example"]`);
    await page.waitFor(`document.querySelector('${editor}')`, 'the request body editor');
    await page.eval(`(t => { t.focus(); t.select(); })(document.querySelector('${editor}'))`);
    await page.type(editor, JSON.stringify({ query: 'gift card points', limit: 3 }, null, 2));
    await page.waitFor(
      `document.querySelector('${editor}').value.includes('gift card points') && !document.querySelector('${editor}').value.includes('embedding_id')`,
      'the edited body',
    );
    const postStatus = await execute(page, postBlock, '/text/similar', 'the live answer of POST /text/similar');
    check(
      /^2\d\d/.test(postStatus),
      `POST /text/similar executed from the page with an edited JSON body answers ${postStatus}`,
    );
    const postCurl = await page.eval<string>(`document.querySelector('${postBlock} .curl-command')?.textContent ?? ''`);
    check(
      postCurl.includes('gift card points') && postCurl.includes('X-API-Key') && postCurl.includes('application/json'),
      'the request carried the edited body as JSON and the key',
    );
    check(
      await page.eval(
        `/"success": true/.test(document.querySelector('${postBlock} .live-responses-table').textContent) && document.querySelector('${postBlock} .live-responses-table').textContent.includes('"results"')`,
      ),
      'the answer body is shown',
    );
    await page.eval(`document.querySelector('${postBlock} .opblock-section-request-body').scrollIntoView()`);
    await page.screenshot(path.join(out, 'docs-8-try-it-body.png'));

    // The Schemas section renders only what is in view: scroll through it and collect the names.
    await page.click('.models .models-control');
    await page.waitFor(`document.querySelector('.models .json-schema-2020-12__title')`, 'the Schemas section');
    const names = Object.keys(doc.components.schemas);
    const listed = new Set<string>();
    await page.eval(`document.querySelector('.models').scrollIntoView()`);
    for (let i = 0; i < 200 && listed.size < names.length; i += 1) {
      for (const n of await page.eval<string[]>(
        `[...document.querySelectorAll('.models .models-virtual-item > article > .json-schema-2020-12-head .json-schema-2020-12__title')].map(t => t.textContent.trim())`,
      ))
        listed.add(n);
      await page.eval(`document.querySelector('.models-scroll').scrollBy(0, 300)`);
      await new Promise((r) => setTimeout(r, 50));
    }
    const unlisted = names.filter((n) => !listed.has(n));
    check(
      !unlisted.length && listed.has('Gift') && listed.has('ErrorDetail'),
      `the Schemas section lists all ${names.length} shared schemas (Gift, ErrorDetail, ErrorSuccess, ${answerName}, …)${unlisted.length ? `; missing ${unlisted.join(', ')}` : ''}`,
    );
    const gift = `[...document.querySelectorAll('.models .models-virtual-item > article')].find(a => a.querySelector('.json-schema-2020-12__title').textContent.trim() === 'Gift')`;
    await page.eval(`document.querySelector('.models-scroll').scrollTop = 0`);
    for (let i = 0; i < 200 && !(await page.eval(`!!${gift}`)); i += 1) {
      await page.eval(`document.querySelector('.models-scroll').scrollBy(0, 300)`);
      await new Promise((r) => setTimeout(r, 50));
    }
    await page.eval(`${gift}.querySelector('.json-schema-2020-12-expand-deep-button').click()`);
    await page.waitFor(`${gift}?.textContent.includes('points_value')`, 'the Gift schema to open');
    await page.eval(`${gift}.scrollIntoView()`);
    await page.screenshot(path.join(out, 'docs-5-schemas.png'));

    // The key survives a reload (persistAuthorization), so the next visit needs no paste.
    await page.page.reload();
    await page.waitFor(`document.querySelector('.opblock')`, 'the page after reload');
    await page.waitFor(
      `window.ui.specSelectors.specResolvedSubtree(['paths', '/loyalty/rules', 'get'])`,
      'the operations to be resolved',
    );
    check(
      await page.waitFor(`document.querySelector('.auth-wrapper .authorize.locked')`, 'the authorized lock'),
      'the key is remembered after a reload',
    );
    await page.screenshot(path.join(out, 'docs-6-full.png'), true);

    // Without the key: log out in the Authorize dialog, and the same GET answers 401 on the page.
    await page.click('.auth-wrapper .authorize');
    await page.waitFor(
      `${apiKeyBox}?.querySelector('button[aria-label="Remove authorization"]')`,
      'the Authorize dialog with the key',
    );
    await page.eval(`${apiKeyBox}.querySelector('button[aria-label="Remove authorization"]').click()`);
    await page.waitFor(`${apiKeyBox}.querySelector('button.authorize')`, 'the key to be removed');
    await page.click('.modal-ux .close-modal');
    check(
      await page.waitFor(`document.querySelector('.auth-wrapper .authorize.unlocked')`, 'the open lock'),
      'logging out in the dialog removes the key',
    );
    await reveal(page, block);
    // Opened by the deep link as the page loaded: closed and opened again, drawn now it is resolved.
    if (await page.eval(`document.querySelector('${block}').classList.contains('is-open')`)) {
      await page.click(`${block} .opblock-summary-control`);
      await page.waitFor(`!document.querySelector('${block}').classList.contains('is-open')`, 'the operation to close');
    }
    await page.click(`${block} .opblock-summary-control`);
    await page.waitFor(`document.querySelector('${block} .execute')`, 'the Execute button of GET /loyalty/rules');
    const problemsBefore = page.problems.length;
    const noKey = await execute(page, block, '/loyalty/rules', 'the live answer without the key');
    check(noKey.startsWith('401'), `GET /loyalty/rules executed from the page without the key answers ${noKey}`);
    check(
      !(await page.eval<string>(`document.querySelector('${block} .curl-command')?.textContent ?? ''`)).includes(
        'X-API-Key',
      ),
      'the request carried no key',
    );
    check(
      await page.eval(`document.querySelector('${block} .live-responses-table').textContent.includes('"detail"')`),
      'the error answer is shown',
    );
    // Chromium logs every 4xx as a network error: this one is expected, any other still counts.
    page.problems.push(
      ...page.problems
        .splice(problemsBefore)
        .filter((m) => !/^console: Failed to load resource: .*status of 401/.test(m)),
    );
    await page.eval(`document.querySelector('${block}').scrollIntoView()`);
    await page.screenshot(path.join(out, 'docs-9-no-key.png'));

    check(
      !page.problems.length,
      `no page errors or CSP violations${page.problems.length ? `:\n    ${page.problems.join('\n    ')}` : ''}`,
    );
  } finally {
    await browser.close().catch(() => undefined);
  }
}

async function main() {
  const out = process.env.DOCS_CHECK_OUT ?? fs.mkdtempSync(path.join(os.tmpdir(), 'docs-check-'));
  fs.mkdirSync(out, { recursive: true });
  let base = process.env.DOCS_CHECK_URL;
  let key = process.env.DOCS_CHECK_KEY;
  let stop = async () => undefined as void;
  if (!base) {
    const { parseEnv } = await import('../activities/core/config.ts');
    const { generateSecret } = await import('../activities/identity/api-keys.ts');
    const { launchPlatform } = await import('../tools/platform.ts');
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'platform-docs-check-'));
    key = generateSecret();
    const env = { DATA_DIR: dataDir, PLATFORM_ADMIN_KEY: key };
    console.log('docs check: starting a platform on free ports…');
    const platform = await launchPlatform({
      cfg: parseEnv({ ...process.env, ...env }),
      freePorts: true,
      env,
      stdio: 'ignore',
    });
    base = platform.edgeUrl;
    stop = async () => {
      await platform.stop();
      fs.rmSync(dataDir, { recursive: true, force: true });
    };
  }
  if (!key) throw new Error('DOCS_CHECK_URL needs DOCS_CHECK_KEY (an API key of that platform)');
  console.log(`docs check: ${base}/docs`);
  try {
    await checkDocs(base.replace(/\/$/, ''), key, out);
    console.log('docs check: passed');
  } finally {
    await stop();
  }
}

main().then(
  () => process.exit(0),
  (err) => {
    console.error(`docs check: ${(err as Error).message}`);
    process.exit(1);
  },
);
