/**
 * An organization's mail templates (docs/components/email.md, "Templates"): a subject and a text
 * and/or HTML body per locale, with `{{name}}` variables. Rendering is one pass of substitution:
 * no expressions, no loops, no code, and a value is never read again as a template (a value that
 * says `{{x}}` stays those characters). HTML bodies get escaped values; a subject refuses a value
 * with a line break (a header). A send names the locale it wants: that version, else the version
 * of its language (`fr` for `fr-CA`), else the template's default locale.
 */
import { randomBytes } from 'node:crypto';

import { conflict, invalid, notFound } from '../core/errors.ts';
import { type Content, escape, paragraphs, wrap } from './compose.ts';
import type { EmailTemplateDoc, TemplateVersion } from './models.ts';
import { emailSettings } from './settings.ts';
import {
  countTemplates,
  deleteTemplate as removeTemplate,
  insertTemplate,
  listTemplates as readTemplates,
  readTemplate,
  replaceTemplate,
} from './store.ts';

export const MAX_TEMPLATES = 200;
const MAX_VARIABLES = 50;
const MAX_VALUE = 2000;
/** Filled by the platform in every send (the recipient's unsubscribe link): never asked of the sender. */
const UNSUBSCRIBE_VARIABLE = 'unsubscribe_url';

const TEMPLATE_ID = /^[a-z][a-z0-9_-]{0,63}$/;
const VARIABLE = /\{\{\s*([A-Za-z_][A-Za-z0-9_]{0,39})\s*\}\}/g;

/** The variables a text uses; 422 naming `field` for a `{{` that is not one. */
function variablesIn(text: string, field: string): string[] {
  const names = [...text.matchAll(VARIABLE)].map((m) => m[1]);
  if (text.replace(VARIABLE, '').includes('{{'))
    throw invalid(field, 'a "{{" that is not a variable: variables are {{name}} (letters, digits and _)');
  return names;
}

/** `fr-ca` → `fr-CA`; 422 naming `field` when it is no locale. */
function canonicalLocale(locale: string, field: string): string {
  try {
    const [canonical] = Intl.getCanonicalLocales(locale);
    if (canonical && /^[a-z]{2,3}(-[A-Za-z0-9]{2,8}){0,3}$/.test(canonical)) return canonical;
  } catch {
    // RangeError: not a BCP 47 tag
  }
  throw invalid(field, 'a locale such as en, fr or pt-BR');
}

export interface TemplateInput {
  template_id?: string;
  name: string;
  default_locale: string;
  versions: Array<{ locale: string; subject: string; text?: string | null; html?: string | null }>;
}

/** Checks a template's versions (locales, syntax, one default) and lists its variables. */
function checked(input: TemplateInput): Pick<EmailTemplateDoc, 'default_locale' | 'versions' | 'variables'> {
  const default_locale = canonicalLocale(input.default_locale, 'default_locale');
  const seen = new Set<string>();
  const names = new Set<string>();
  const versions: TemplateVersion[] = input.versions.map((v, i) => {
    const at = `versions.${i}`;
    const locale = canonicalLocale(v.locale, `${at}.locale`);
    if (seen.has(locale.toLowerCase())) throw invalid(`${at}.locale`, `${locale} is given twice`);
    seen.add(locale.toLowerCase());
    const text = v.text ?? null;
    const html = v.html ?? null;
    if (!text && !html) throw invalid(`${at}.text`, 'a version needs a text or an html body (or both)');
    for (const [field, value] of [
      ['subject', v.subject],
      ['text', text],
      ['html', html],
    ] as const)
      if (value) for (const n of variablesIn(value, `${at}.${field}`)) names.add(n);
    return { locale, subject: v.subject, text, html };
  });
  if (!seen.has(default_locale.toLowerCase()))
    throw invalid('default_locale', `${default_locale} has no version: give one with this locale`);
  if (names.size > MAX_VARIABLES) throw invalid('versions', `at most ${MAX_VARIABLES} different variables`);
  return { default_locale, versions, variables: [...names].sort() };
}

export interface TemplateView {
  template_id: string;
  name: string;
  default_locale: string;
  versions: TemplateVersion[];
  variables: string[];
  created_at: string;
  updated_at: string;
}

const view = (d: EmailTemplateDoc): TemplateView => ({
  template_id: d.template_id,
  name: d.name,
  default_locale: d.default_locale,
  versions: d.versions,
  variables: d.variables,
  created_at: new Date(d.created_at).toISOString(),
  updated_at: new Date(d.updated_at).toISOString(),
});

async function existing(organization_id: string, template_id: string): Promise<EmailTemplateDoc> {
  const doc = await readTemplate(organization_id, template_id);
  if (!doc) throw notFound(`Template not found: ${template_id}`);
  return doc;
}

export async function createTemplate(organization_id: string, input: TemplateInput, by: string): Promise<TemplateView> {
  const content = checked(input);
  // Counted before the insert: two creations at once may pass the limit by one, never by more per caller.
  if ((await countTemplates(organization_id)) >= MAX_TEMPLATES)
    throw conflict(`The organization has ${MAX_TEMPLATES} templates, the most: delete one first`);
  const template_id = input.template_id ?? `tpl_${randomBytes(8).toString('hex')}`;
  if (!TEMPLATE_ID.test(template_id))
    throw invalid('template_id', 'lower-case letters, digits, _ and -, from a letter');
  const now = new Date();
  const doc = {
    organization_id,
    template_id,
    name: input.name,
    ...content,
    created_at: now,
    updated_at: now,
    updated_by: by,
  };
  if (!(await insertTemplate(doc))) throw conflict(`template_id: ${template_id} exists already`);
  return view({ _id: '', ...doc });
}

export async function updateTemplate(
  organization_id: string,
  template_id: string,
  input: TemplateInput,
  by: string,
): Promise<TemplateView> {
  const content = checked(input);
  const doc = await replaceTemplate(organization_id, template_id, {
    name: input.name,
    ...content,
    updated_at: new Date(),
    updated_by: by,
  });
  if (!doc) throw notFound(`Template not found: ${template_id}`);
  return view(doc);
}

export async function deleteTemplate(organization_id: string, template_id: string): Promise<void> {
  if (!(await removeTemplate(organization_id, template_id))) throw notFound(`Template not found: ${template_id}`);
}

export const getTemplate = async (organization_id: string, template_id: string) =>
  view(await existing(organization_id, template_id));

export const listTemplates = async (organization_id: string) =>
  (await readTemplates(organization_id, MAX_TEMPLATES)).map(view);

/** The version for `requested`: that locale, else its language, else the default. */
function versionFor(doc: EmailTemplateDoc, requested: string | undefined, field: string): TemplateVersion {
  const byLocale = (l: string) => doc.versions.find((v) => v.locale.toLowerCase() === l.toLowerCase());
  if (requested) {
    const locale = canonicalLocale(requested, field);
    const found = byLocale(locale) ?? byLocale(locale.split('-')[0]);
    if (found) return found;
  }
  return byLocale(doc.default_locale) ?? doc.versions[0];
}

/** The values of a send, as text; 422 naming the variable for a value of the wrong kind or size. */
function values(given: unknown, field: string): Map<string, string> {
  if (given === undefined || given === null) return new Map();
  if (typeof given !== 'object' || Array.isArray(given)) throw invalid(field, 'an object of name → value');
  const out = new Map<string, string>();
  for (const [k, v] of Object.entries(given)) {
    if (typeof v !== 'string' && typeof v !== 'number' && typeof v !== 'boolean')
      throw invalid(`${field}.${k}`, 'must be a string, a number or a boolean');
    const text = String(v);
    if (text.length > MAX_VALUE) throw invalid(`${field}.${k}`, `at most ${MAX_VALUE} characters`);
    out.set(k, text);
  }
  return out;
}

const fill = (text: string, vars: Map<string, string>, esc: (s: string) => string) =>
  text.replace(VARIABLE, (_, name: string) => esc(vars.get(name) ?? ''));

/** A rough text part of an HTML-only template: its text without tags. */
const textOfHtml = (html: string) =>
  html
    .replace(/<(style|script)[^>]*>[\s\S]*?<\/\1>/gi, '')
    .replace(/<br\s*\/?>|<\/p>|<\/div>|<\/h\d>|<\/li>/gi, '\n')
    .replace(/<[^>]+>/g, '')
    .replace(/\n{3,}/g, '\n\n')
    .trim();

export interface Rendered extends Content {
  locale: string;
}

/**
 * Renders a template's version for `locale` with `variables` (`field` names them in errors: the
 * send's `metadata.variables`, the preview's `variables`). 422 naming the first variable the
 * version uses and the send leaves unfilled; `unsubscribe_url` is the platform's to fill.
 */
export function renderTemplate(
  doc: EmailTemplateDoc,
  given: unknown,
  opts: { locale?: string; field: string; unsubscribe_url: string },
): Rendered {
  const version = versionFor(doc, opts.locale, opts.field.replace(/variables$/, 'locale'));
  const vars = values(given, opts.field);
  vars.set(UNSUBSCRIBE_VARIABLE, opts.unsubscribe_url);
  const used = [version.subject, version.text ?? '', version.html ?? ''].flatMap((t) =>
    [...t.matchAll(VARIABLE)].map((m) => m[1]),
  );
  const missing = used.find((n) => !vars.has(n));
  if (missing)
    throw invalid(
      `${opts.field}.${missing}`,
      `the template ${doc.template_id} (${version.locale}) uses {{${missing}}} and no value was given`,
    );
  for (const n of [...version.subject.matchAll(VARIABLE)].map((m) => m[1]))
    if (/[\r\n]/.test(vars.get(n)!)) throw invalid(`${opts.field}.${n}`, 'is in the subject: no line breaks');
  const subject = fill(version.subject, vars, (s) => s).trim();
  const text = version.text ? fill(version.text, vars, (s) => s) : textOfHtml(fill(version.html!, vars, (s) => s));
  const html = version.html ? fill(version.html, vars, escape) : wrap(subject, paragraphs(text));
  return { locale: version.locale, subject, text, html };
}

/** The template a send names, or 404 (another organization's templates are not found either). */
export const templateFor = existing;

/**
 * A send by template (`metadata.template_id`, `variables`, `locale`), checked before anything
 * starts: a notification only, without the built-in templates' fields, naming a template of the
 * organization whose version for the locale the variables fill (404 / 422, nothing sent).
 */
export async function checkTemplateSend(
  organization_id: string,
  email_type: string,
  metadata: Record<string, unknown>,
): Promise<void> {
  const id = metadata.template_id;
  if (id === undefined) return;
  if (typeof id !== 'string' || !TEMPLATE_ID.test(id))
    throw invalid('metadata.template_id', 'a template id (lower-case letters, digits, _ and -)');
  if (email_type !== 'notification') throw invalid('metadata.template_id', 'only with email_type notification');
  for (const field of ['template', 'subject', 'body'])
    if (metadata[field] !== undefined)
      throw invalid(`metadata.${field}`, 'not with metadata.template_id: the template gives the subject and the text');
  if (metadata.locale !== undefined && typeof metadata.locale !== 'string')
    throw invalid('metadata.locale', 'a locale such as en, fr or pt-BR');
  renderTemplate(await existing(organization_id, id), metadata.variables, {
    locale: metadata.locale as string | undefined,
    field: 'metadata.variables',
    unsubscribe_url: 'https://unsubscribe.invalid/',
  });
}

/** What a send of the template would say (nothing is sent); the unsubscribe link is a sample. */
export async function previewTemplate(
  organization_id: string,
  template_id: string,
  input: { variables?: Record<string, unknown>; locale?: string },
): Promise<Rendered> {
  return renderTemplate(await existing(organization_id, template_id), input.variables, {
    locale: input.locale,
    field: 'variables',
    unsubscribe_url: `${emailSettings().publicUrl}/email/unsubscribe?o=${encodeURIComponent(organization_id)}&a=preview&t=preview`,
  });
}
