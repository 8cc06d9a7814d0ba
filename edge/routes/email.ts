/**
 * Email: conversation summaries and notifications, sent by the workflow email:<org>:<key>; the
 * organization's templates and suppressions (admin); the keyless unsubscribe link.
 */
import { setResponseHeader } from 'h3';
import { z } from 'zod';

import { notFound } from '../../activities/core/errors.ts';
import {
  createTemplate,
  deleteTemplate,
  EMAIL_TYPES,
  getTemplate,
  listSuppressions,
  listTemplates,
  MAX_TEMPLATES,
  normalAddress,
  previewTemplate,
  requestEmail,
  suppress,
  SUPPRESSION_REASONS,
  unsuppress,
  updateTemplate,
  validLink,
} from '../../activities/email/index.ts';
import { actingUser, organizationFor } from '../auth.ts';
import { answerField, defineRoute } from '../http.ts';
import { idempotencyKeyOf } from '../idempotency.ts';
import { organizationId, requiredId } from '../schemas.ts';

defineRoute({
  method: 'POST',
  paths: ['/email/send'],
  tag: 'email',
  summary:
    "Sends a conversation summary or a notification (a built-in template, or the organization's metadata.template_id with metadata.variables and metadata.locale); metadata.idempotency_key (or Idempotency-Key) sends once",
  statuses: {
    409: 'The recipient is suppressed in this organization (unsubscribed, hard bounce or by an admin): nothing was sent',
  },
  auth: 'key',
  audit: {
    action: 'email.send',
    target: ({ result }) => ({ type: 'email', id: answerField(result, 'message_id') }),
    keep: ['conversation_id', 'metadata.template', 'metadata.email_type', 'metadata.template_id', 'metadata.locale'],
  },
  idempotent: true,
  body: z.object({
    user_id: requiredId,
    organization_id: organizationId,
    conversation_id: requiredId,
    email_type: z.enum(EMAIL_TYPES),
    metadata: z.record(z.string(), z.unknown()).default({}),
  }),
  response: z.object({
    success: z.literal(true),
    message_id: z.string(),
    metadata: z.object({ sent_at: z.string(), recipient: z.string(), email_type: z.string() }),
    duplicate: z.boolean(),
    transport: z.string(),
  }),
  handler: async ({ event, principal, body }) => {
    const org = organizationFor(principal, body.organization_id);
    const user = await actingUser(principal, org, body.user_id);
    const { sent, duplicate } = await requestEmail({
      organization_id: org,
      user_id: user.user_id,
      actor_level: principal.level,
      conversation_id: body.conversation_id,
      email_type: body.email_type,
      metadata: body.metadata,
      headerKey: () => idempotencyKeyOf(event),
    });
    const { message_id, sent_at, recipient, email_type, transport } = sent;
    return { success: true, message_id, metadata: { sent_at, recipient, email_type }, duplicate, transport };
  },
});

// ---- templates (admin): activities/email/templates.ts

const tag = 'email';
const orgQuery = z.object({ organization_id: organizationId });
const templateParams = z.object({
  template_id: z.string().regex(/^[a-z][a-z0-9_-]{0,63}$/, 'a template id (lower-case letters, digits, _ and -)'),
});
const locale = z
  .string()
  .trim()
  .min(2)
  .max(35)
  .regex(/^[A-Za-z]{2,3}(-[A-Za-z0-9]{2,8}){0,3}$/, 'a locale such as en, fr or pt-BR');
const templateBody = z.object({
  organization_id: organizationId,
  name: z.string().trim().min(1).max(100),
  default_locale: locale.describe('the version sent when the requested locale and its language have none'),
  versions: z
    .array(
      z
        .object({
          locale,
          subject: z
            .string()
            .trim()
            .min(1)
            .max(200)
            .refine((v) => !/[\r\n]/.test(v), 'one line'),
          text: z
            .string()
            .max(50_000)
            .nullable()
            .optional()
            .describe('the text part; from the html without tags if absent'),
          html: z
            .string()
            .max(100_000)
            .nullable()
            .optional()
            .describe('the HTML part (values escaped); the text in paragraphs if absent'),
        })
        .strict(),
    )
    .min(1)
    .max(20)
    .describe(
      'one per locale; {{name}} variables in the subject and bodies ({{unsubscribe_url}} is filled by the platform)',
    ),
});
const templateView = z.object({
  template_id: z.string(),
  name: z.string(),
  default_locale: z.string(),
  versions: z.array(
    z.object({ locale: z.string(), subject: z.string(), text: z.string().nullable(), html: z.string().nullable() }),
  ),
  variables: z.array(z.string()).describe('the variables any version uses'),
  created_at: z.string(),
  updated_at: z.string(),
});
const templateAnswer = z.object({ success: z.literal(true), template: templateView });
defineRoute({
  method: 'POST',
  paths: ['/api/email/templates'],
  tag,
  status: 201,
  statuses: { 409: `The template_id is taken, or the organization has ${MAX_TEMPLATES} templates` },
  summary:
    'Creates a mail template (admin): a subject and a text and/or HTML body per locale with {{name}} variables, sent with metadata.template_id',
  auth: 'admin',
  audit: {
    action: 'email_template.create',
    target: ({ result }) => ({ type: 'email_template', id: answerField(result, 'template', 'template_id') }),
    keep: ['template_id', 'name', 'default_locale', 'versions.locale'],
  },
  body: templateBody.extend({
    template_id: templateParams.shape.template_id.optional().describe('chosen by the admin; else tpl_<random>'),
  }),
  response: templateAnswer,
  handler: async ({ principal, body }) => {
    const org = organizationFor(principal, body.organization_id);
    return { success: true, template: await createTemplate(org, body, principal.key_id) };
  },
});

defineRoute({
  method: 'GET',
  paths: ['/api/email/templates'],
  tag,
  summary: `The organization's mail templates, newest first (admin, at most ${MAX_TEMPLATES})`,
  auth: 'admin',
  query: orgQuery,
  response: z.object({ success: z.literal(true), templates: z.array(templateView) }),
  handler: async ({ principal, query }) => ({
    success: true,
    templates: await listTemplates(organizationFor(principal, query.organization_id)),
  }),
});

defineRoute({
  method: 'GET',
  paths: ['/api/email/templates/:template_id'],
  tag,
  summary: 'A mail template with its versions (admin)',
  auth: 'admin',
  params: templateParams,
  query: orgQuery,
  response: templateAnswer,
  handler: async ({ principal, params, query }) => ({
    success: true,
    template: await getTemplate(organizationFor(principal, query.organization_id), params.template_id),
  }),
});

defineRoute({
  method: 'PUT',
  paths: ['/api/email/templates/:template_id'],
  tag,
  summary: "Replaces a template's name, default locale and versions (admin); sends from then on use them",
  auth: 'admin',
  audit: {
    action: 'email_template.update',
    target: ({ params }) => ({ type: 'email_template', id: params.template_id }),
    keep: ['template_id', 'name', 'default_locale', 'versions.locale'],
  },
  params: templateParams,
  body: templateBody,
  response: templateAnswer,
  handler: async ({ principal, params, body }) => {
    const org = organizationFor(principal, body.organization_id);
    return { success: true, template: await updateTemplate(org, params.template_id, body, principal.key_id) };
  },
});

defineRoute({
  method: 'DELETE',
  paths: ['/api/email/templates/:template_id'],
  tag,
  summary: 'Deletes a template (admin); sends and scheduled events naming it then answer 404',
  auth: 'admin',
  audit: {
    action: 'email_template.delete',
    target: ({ params }) => ({ type: 'email_template', id: params.template_id }),
  },
  params: templateParams,
  query: orgQuery,
  response: z.object({ success: z.literal(true), template_id: z.string(), deleted: z.literal(true) }),
  handler: async ({ principal, params, query }) => {
    await deleteTemplate(organizationFor(principal, query.organization_id), params.template_id);
    return { success: true, template_id: params.template_id, deleted: true };
  },
});

defineRoute({
  method: 'POST',
  paths: ['/api/email/templates/:template_id/preview'],
  tag,
  summary:
    'Renders a template with variables for a locale (admin; sends nothing): 422 naming a variable the version uses and the call leaves unfilled',
  auth: 'admin',
  audit: false,
  params: templateParams,
  body: z.object({
    organization_id: organizationId,
    variables: z
      .record(z.string(), z.union([z.string(), z.number(), z.boolean()]))
      .default({})
      .describe('name → value'),
    locale: locale.optional().describe('the locale wanted: that version, else its language, else the default'),
  }),
  response: z.object({
    success: z.literal(true),
    locale: z.string().describe('the version rendered'),
    subject: z.string(),
    text: z.string(),
    html: z.string(),
  }),
  handler: async ({ principal, params, body }) => {
    const org = organizationFor(principal, body.organization_id);
    return { success: true, ...(await previewTemplate(org, params.template_id, body)) };
  },
});

// ---- suppressions (admin): activities/email/suppressions.ts

const address = z
  .string()
  .trim()
  .max(320)
  .pipe(z.email('one valid email address'))
  .transform((a) => normalAddress(a));
const suppressionView = z.object({
  address: z.string().nullable().describe("null once the person's data was erased (the address's hash stays)"),
  reason: z.enum(SUPPRESSION_REASONS),
  source: z.string().describe('the admin key, unsubscribe_link, or smtp (a permanent rejection)'),
  detail: z.string().nullable().describe("the mail server's answer, for a hard bounce"),
  created_at: z.string(),
});
defineRoute({
  method: 'GET',
  paths: ['/api/email/suppressions'],
  tag,
  summary: "The organization's suppressed addresses, newest first (admin)",
  auth: 'admin',
  query: z.object({
    organization_id: organizationId,
    reason: z.enum(SUPPRESSION_REASONS).optional(),
    limit: z.coerce.number().int().min(1).max(500).default(100),
    before: z.iso.datetime({ offset: true }).optional().describe('the created_at of the last one of the previous page'),
  }),
  response: z.object({ success: z.literal(true), suppressions: z.array(suppressionView) }),
  handler: async ({ principal, query }) => ({
    success: true,
    suppressions: await listSuppressions(organizationFor(principal, query.organization_id), {
      limit: query.limit,
      reason: query.reason,
      before: query.before ? new Date(query.before) : undefined,
    }),
  }),
});

defineRoute({
  method: 'POST',
  paths: ['/api/email/suppressions'],
  tag,
  summary:
    'Suppresses an address in the organization (admin): no send goes to it until it is lifted; created false when it was already (the first reason stays)',
  auth: 'admin',
  audit: {
    action: 'email_suppression.create',
    // The address is personal: the record names the organization's list, not the address.
    target: ({ principal, body }) => ({
      type: 'email_suppressions',
      id: body.organization_id ?? principal.organization_id,
    }),
    keep: ['reason'],
  },
  body: z.object({
    organization_id: organizationId,
    address,
    reason: z.enum(SUPPRESSION_REASONS).default('manual'),
  }),
  response: z.object({ success: z.literal(true), created: z.boolean(), suppression: suppressionView }),
  handler: async ({ principal, body }) => {
    const org = organizationFor(principal, body.organization_id);
    return { success: true, ...(await suppress(org, body.address, body.reason, principal.key_id)) };
  },
});

defineRoute({
  method: 'DELETE',
  paths: ['/api/email/suppressions/:address'],
  tag,
  summary: 'Lifts the suppression of an address (admin): sends reach it again; 404 when it is not suppressed',
  auth: 'admin',
  audit: {
    action: 'email_suppression.delete',
    target: ({ principal, query }) => ({
      type: 'email_suppressions',
      id: query.organization_id ?? principal.organization_id,
    }),
  },
  params: z.object({ address }),
  query: orgQuery,
  response: z.object({ success: z.literal(true), deleted: z.literal(true) }),
  handler: async ({ principal, params, query }) => {
    await unsuppress(organizationFor(principal, query.organization_id), params.address);
    return { success: true, deleted: true };
  },
});

// ---- the unsubscribe link (no key): activities/email/suppressions.ts signs it

const linkQuery = z.object({
  o: z.string().trim().min(1).max(100).describe('the organization'),
  a: z.string().trim().min(3).max(320).describe('the address'),
  t: z.string().max(64).describe('the signature'),
});
const escapeHtml = (s: string) =>
  s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);
const page = (title: string, inner: string) =>
  `<!doctype html><html><head><meta charset="utf-8"><meta name="viewport" content="width=device-width"><title>${title}</title></head><body style="font-family:system-ui,sans-serif;max-width:32rem;margin:3rem auto;line-height:1.5">${inner}</body></html>\n`;

/** The link's address, or 404 for any link not signed by the platform (all alike: nothing to learn). */
function linkAddress(event: Parameters<typeof setResponseHeader>[0], q: z.infer<typeof linkQuery>): string {
  // The link carries a signature: it must not leak through a Referer, be cached or be sniffed.
  setResponseHeader(event, 'referrer-policy', 'no-referrer');
  setResponseHeader(event, 'cache-control', 'no-store');
  setResponseHeader(event, 'x-content-type-options', 'nosniff');
  if (!validLink(q.o, q.a, q.t)) throw notFound('Unsubscribe link not valid');
  return normalAddress(q.a);
}

defineRoute({
  method: 'GET',
  paths: ['/email/unsubscribe'],
  tag,
  summary:
    'The unsubscribe link of every message (no key; rate limited per address): a page whose button POSTs the same link. GET changes nothing (mail scanners open links)',
  auth: 'none',
  rateLimit: 'ip',
  statuses: { 404: 'Unsubscribe link not valid (a changed organization, address or signature)' },
  produces: 'text/html; charset=utf-8',
  query: linkQuery,
  handler: ({ event, query }) => {
    const to = linkAddress(event, query);
    const action = `/email/unsubscribe?${new URLSearchParams(query)}`;
    return page(
      'Unsubscribe',
      `<h1>Unsubscribe</h1><p>Stop all mail to <b>${escapeHtml(to)}</b> from this sender?</p><form method="post" action="${escapeHtml(action)}"><input type="hidden" name="List-Unsubscribe" value="One-Click"><button type="submit">Unsubscribe</button></form>`,
    );
  },
});

defineRoute({
  method: 'POST',
  paths: ['/email/unsubscribe'],
  tag,
  summary:
    'Unsubscribes the link\'s address from the organization\'s mail (no key; RFC 8058 one-click: the body "List-Unsubscribe=One-Click" is not needed). A repeat changes nothing',
  auth: 'none',
  rateLimit: 'ip',
  statuses: { 404: 'Unsubscribe link not valid (a changed organization, address or signature)' },
  produces: 'text/html; charset=utf-8',
  query: linkQuery,
  handler: async ({ event, query }) => {
    const to = linkAddress(event, query);
    await suppress(query.o, to, 'unsubscribe', 'unsubscribe_link');
    return page(
      'Unsubscribed',
      `<h1>Unsubscribed</h1><p><b>${escapeHtml(to)}</b> will receive no more mail from this sender.</p>`,
    );
  },
});
