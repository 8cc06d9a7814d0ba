/** Email content: conversation summaries and notification templates, text and HTML parts. */
import { PlatformError } from '../core/errors.ts';

export const EMAIL_TYPES = ['conversation_summary', 'notification'] as const;
export type EmailType = (typeof EMAIL_TYPES)[number];
const TEMPLATES = ['generic', 'points_awarded', 'welcome', 'reminder'] as const;

export interface Content {
  subject: string;
  text: string;
  html: string;
}

export const escape = (s: string) =>
  s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);
const bad = (field: string, message: string) =>
  new PlatformError('invalid', `metadata.${field}: ${message}`, `metadata.${field}`);

/** A header value the client supplied: one line, bounded. */
function headerText(meta: Record<string, unknown>, field: string, required = true): string | undefined {
  const v = meta[field];
  if (v === undefined || v === null || v === '') {
    if (required) throw bad(field, 'is required for this template');
    return undefined;
  }
  if (typeof v !== 'string') throw bad(field, 'must be a string');
  if (/[\r\n]/.test(v)) throw bad(field, 'must not contain line breaks');
  if (v.length > 200) throw bad(field, 'at most 200 characters');
  return v.trim();
}

function bodyText(meta: Record<string, unknown>, field: string): string {
  const v = meta[field];
  if (typeof v !== 'string' || !v.trim()) throw bad(field, 'is required for this template');
  if (v.length > 20_000) throw bad(field, 'at most 20,000 characters');
  return v.trim();
}

export const paragraphs = (text: string) =>
  text
    .split(/\n{2,}/)
    .map((p) => `<p>${escape(p).replace(/\n/g, '<br>')}</p>`)
    .join('\n');

export const wrap = (subject: string, inner: string) =>
  `<!doctype html><html><head><meta charset="utf-8"><title>${escape(subject)}</title></head><body style="font-family:system-ui,sans-serif;line-height:1.5;color:#1d2330">\n${inner}\n</body></html>`;

/** Validates and renders a notification (pure: the edge calls it to refuse bad input early). */
export function notificationContent(meta: Record<string, unknown>, organizationName: string): Content {
  const template = meta.template ?? 'generic';
  if (typeof template !== 'string' || !(TEMPLATES as readonly string[]).includes(template))
    throw bad('template', `must be one of ${TEMPLATES.join(', ')}`);
  let subject: string;
  let text: string;
  switch (template) {
    case 'points_awarded': {
      const points = meta.points;
      if (typeof points !== 'number' || !Number.isFinite(points) || points <= 0)
        throw bad('points', 'must be a positive number');
      const balance = typeof meta.balance === 'number' ? ` Your balance is now ${meta.balance} points.` : '';
      subject = headerText(meta, 'subject', false) ?? `You earned ${points} points`;
      text = `Good news: ${points} points were added to your ${organizationName} account.${balance}`;
      break;
    }
    case 'welcome': {
      const name = headerText(meta, 'name', false);
      subject = headerText(meta, 'subject', false) ?? `Welcome to ${organizationName}`;
      text = `${name ? `Hello ${name},` : 'Hello,'}\n\nWelcome to ${organizationName}. We are glad to have you.`;
      break;
    }
    case 'reminder': {
      const title = headerText(meta, 'title')!;
      const when = headerText(meta, 'when', false);
      subject = headerText(meta, 'subject', false) ?? `Reminder: ${title}`;
      text = `This is a reminder about "${title}"${when ? ` on ${when}` : ''}.`;
      break;
    }
    default:
      subject = headerText(meta, 'subject')!;
      text = bodyText(meta, 'body');
  }
  return { subject, text, html: wrap(subject, paragraphs(text)) };
}

export interface SummaryItem {
  source: string;
  message: string;
  created_at: string;
}

/** A readable summary of a conversation's stored responses, oldest first. */
export function summaryContent(conversation_id: string, items: SummaryItem[], subjectOverride?: string): Content {
  const subject =
    subjectOverride ?? `Summary of your conversation (${items.length} item${items.length === 1 ? '' : 's'})`;
  const lines = items.map((i) => `- ${i.created_at.slice(0, 16).replace('T', ' ')} UTC [${i.source}] ${i.message}`);
  const text = `Here is a summary of conversation ${conversation_id}:\n\n${lines.join('\n')}\n`;
  const html = wrap(
    subject,
    `<p>Here is a summary of conversation <code>${escape(conversation_id)}</code>:</p>\n<ul>\n${items
      .map(
        (i) =>
          `<li><small>${escape(i.created_at.slice(0, 16).replace('T', ' '))} UTC · ${escape(i.source)}</small><br>${escape(i.message)}</li>`,
      )
      .join('\n')}\n</ul>`,
  );
  return { subject, text, html };
}
