/**
 * The audit trail's hook (docs/components/audit.md), applied by edge/app.ts to every route: a
 * POST, PUT, PATCH or DELETE made with an admin or system_admin key writes an intent before its
 * handler runs and, when the handler succeeded (2xx) and was not an idempotent replay, appends
 * exactly one record before the answer is sent. Routes that change nothing say `audit: false`.
 * What a record may hold is decided here, for every route: user references as the platform user
 * ids they resolve to, free text as its length unless the route declares the field kept
 * (activities/audit/mask.ts), targets never a raw path value that may name a person.
 */
import type { H3Event } from 'h3';
import { z } from 'zod';

import {
  type AuditEntry,
  beginIntent,
  bodyChanges,
  type ChangePolicy,
  dropIntent,
  isPlatformId,
  isUserReferenceName,
  type JsonSchema,
  mergeChanges,
  newIntentId,
  recordChange,
  recordedUser,
  textLength,
} from '../activities/audit/index.ts';
import { newAuditNotes, withAuditNotes } from '../activities/core/audit-note.ts';
import { PlatformError } from '../activities/core/errors.ts';
import type { Logger } from '../activities/core/logger.ts';
import { findUserRef, isPlatformUserId, type Principal } from '../activities/identity/index.ts';
import { Reply, type RouteDef } from './http.ts';

const MUTATING = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/** Whether a route's successful admin requests are recorded. */
export const auditedRoute = (def: RouteDef) => def.audit !== false && MUTATING.has(def.method) && def.auth !== 'none';

const snake = (s: string) =>
  s
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '_')
    .replace(/^_+|_+$/g, '');
const singular = (s: string) =>
  s.endsWith('ies')
    ? `${s.slice(0, -3)}y`
    : s.endsWith('ses')
      ? s.slice(0, -2)
      : s.endsWith('s') && !s.endsWith('ss')
        ? s.slice(0, -1)
        : s;
const VERB: Record<string, string> = { POST: 'create', PUT: 'update', PATCH: 'update', DELETE: 'delete' };

/**
 * The action and target a route's records get unless it names its own: `<resource>.<verb>` from
 * the documented path. `/x/things` POST → `thing.create`; `/x/things/:id` PUT, PATCH, DELETE →
 * `thing.update` / `thing.delete` (target the `:id`); `/x/things/:id/settle` → `thing.settle`.
 */
function derivedAudit(def: Pick<RouteDef, 'method' | 'paths' | 'tag'>): {
  action: string;
  resource: string;
  param?: string;
} {
  const segs = def.paths[0].split('/').filter(Boolean);
  const isParam = (s: string | undefined) => !!s && s.startsWith(':');
  const last = segs[segs.length - 1] ?? def.tag;
  let resource: string;
  let verb: string;
  let param: string | undefined;
  if (isParam(last)) {
    param = last.slice(1);
    resource = singular(snake(segs[segs.length - 2] ?? def.tag));
    verb = def.method === 'POST' ? 'update' : VERB[def.method];
  } else if (isParam(segs[segs.length - 2])) {
    param = segs[segs.length - 2].slice(1);
    resource = singular(snake(segs[segs.length - 3] ?? def.tag));
    verb = snake(last);
  } else {
    resource = singular(snake(last));
    verb = def.method === 'DELETE' ? 'clear' : VERB[def.method];
  }
  return { action: `${resource}.${verb}`, resource, param };
}

type Fields = Record<string, unknown>;
const asFields = (v: unknown): Fields | undefined =>
  v && typeof v === 'object' && !Array.isArray(v) ? (v as Fields) : undefined;
const answerBody = (result: unknown) => asFields(result instanceof Reply ? result.body : result);

/** An id the answer gives for the resource: `{gift: {id}}`, `{id}`, `{gift_id}`. */
function idInAnswer(body: Fields | undefined, resource: string): string | undefined {
  if (!body) return undefined;
  const nested = asFields(body[resource]);
  const v = (nested ? (nested.id ?? nested[`${resource}_id`]) : undefined) ?? body.id ?? body[`${resource}_id`];
  return v === undefined || v === null || typeof v === 'object' ? undefined : String(v);
}

/** The request body's JSON Schema of a route (its enums tell which values are vocabulary), once per route. */
const schemas = new WeakMap<RouteDef, JsonSchema | undefined>();
function bodySchema(def: RouteDef): JsonSchema | undefined {
  if (schemas.has(def)) return schemas.get(def);
  const zod = def.body ?? def.form?.fields;
  let schema: JsonSchema | undefined;
  try {
    schema = zod ? (z.toJSONSchema(zod, { io: 'input', unrepresentable: 'any' }) as JsonSchema) : undefined;
  } catch {
    schema = undefined; // then no value is taken for an enum's: texts are lengths
  }
  schemas.set(def, schema);
  return schema;
}

/** Every string under a field that names a user, at any depth (params, query, body, notes). */
function userReferences(value: unknown, out: Set<string>, key = '', depth = 0): Set<string> {
  if (depth > 8 || value === null || value === undefined) return out;
  if (typeof value === 'string') {
    if (isUserReferenceName(key)) out.add(value);
  } else if (Array.isArray(value)) {
    for (const v of value.slice(0, 50)) userReferences(v, out, key, depth + 1);
  } else if (typeof value === 'object' && !Buffer.isBuffer(value)) {
    for (const [k, v] of Object.entries(value as Record<string, unknown>)) userReferences(v, out, k, depth + 1);
  }
  return out;
}

/** An id a record may name as it is: a platform id or a catalogue number; anything else may be a person's words. */
const recordableId = (id: string) => isPlatformId(id) || /^\d{1,16}$/.test(id);

/** What the request sent, as parsed by its route's schemas (each may be absent). */
export interface RequestParts {
  params: unknown;
  query: unknown;
  body: unknown;
  form: unknown;
}

const APPEND_ATTEMPTS = 3;

/** One audited request: its notes, its intent, and the record appended when it succeeds. */
export class AuditTrail {
  private readonly notes = newAuditNotes();
  /** the intent's id, chosen here and carried into the record (the maintenance run matches on it) */
  private readonly intent_id = newIntentId();
  private intent?: string;

  private constructor(
    private readonly def: RouteDef,
    private readonly principal: Principal,
    private readonly parts: RequestParts,
    private readonly request_id: string,
    private readonly logger: Logger,
  ) {}

  /**
   * The trail of a request, or undefined when it is not audited (a read, a basic key, `audit:
   * false`). Its intent is written now: a trail that cannot be written refuses the request before
   * anything changes.
   */
  static async begin(
    def: RouteDef,
    principal: Principal | undefined,
    parts: RequestParts,
    request_id: string,
    logger: Logger,
  ): Promise<AuditTrail | undefined> {
    if (!principal || principal.level < 1 || !auditedRoute(def)) return undefined;
    const trail = new AuditTrail(def, principal, parts, request_id, logger);
    try {
      trail.intent = await beginIntent(await trail.entry(undefined), trail.intent_id);
    } catch (err) {
      logger.error({ err, request_id }, 'audit intent not written: the request is refused');
      throw new PlatformError('unavailable', 'The audit trail is unavailable; nothing was changed. Try again shortly');
    }
    return trail;
  }

  /** Runs the handler with the request's notes (activities/core/audit-note.ts) open. */
  run<T>(fn: () => T): T {
    return withAuditNotes(this.notes, fn);
  }

  private async entry(result: unknown): Promise<AuditEntry> {
    const body = answerBody(result);
    const derived = derivedAudit(this.def);
    const spec = this.def.audit || undefined;
    let target: { type: string; id: string | number } | undefined;
    if (result !== undefined) {
      try {
        target = spec?.target?.({
          params: this.parts.params,
          body: this.parts.body,
          query: this.parts.query,
          result: body,
          principal: this.principal,
        });
      } catch {
        target = undefined;
      }
    }
    // A path value names the target only through the trail's own rules below: it may be a person.
    let fromPath: string | undefined;
    const pathValue = derived.param ? asFields(this.parts.params)?.[derived.param] : undefined;
    if (!target && (typeof pathValue === 'string' || typeof pathValue === 'number')) {
      target = { type: derived.resource, id: pathValue };
      fromPath = derived.param;
    }
    const organization_id = this.organization(target);
    if (!target) {
      const id = idInAnswer(body, derived.resource);
      target = { type: derived.resource, id: id ?? organization_id };
    }
    const namesUser = target.type === 'user' || (fromPath !== undefined && isUserReferenceName(fromPath));
    const refs = userReferences(this.parts.body ?? this.parts.form, new Set());
    for (const [field, c] of Object.entries(this.notes.changes))
      for (const v of [c.from, c.to]) userReferences(v, refs, field);
    if (namesUser) refs.add(String(target.id));
    const policy: ChangePolicy = {
      keep: spec?.keep,
      schema: bodySchema(this.def),
      users: await this.resolve(organization_id, refs),
    };
    let target_id = String(target.id);
    if (namesUser) target_id = String(recordedUser(target_id, policy));
    else if (fromPath !== undefined && !recordableId(target_id)) target_id = textLength(target_id);
    return {
      organization_id,
      actor: {
        key_id: this.principal.key_id,
        user_id: this.principal.user_id,
        level: this.principal.level >= 2 ? 'system_admin' : 'admin',
      },
      action: spec?.action ?? derived.action,
      target: { type: target.type, id: target_id },
      request_id: this.request_id,
      intent_id: this.intent_id,
      changes: mergeChanges(bodyChanges(this.parts.body ?? this.parts.form, policy), this.notes.changes, policy),
    };
  }

  /**
   * The platform user id of each reference (a user_id as it is; an idp_id looked up, from the
   * process's cache of references when seen before). One the organization does not know (yet: the
   * request creates it; or any more) is left out, and the record says `[unknown user]`. Never the
   * reference itself: an idp_id is often an email.
   */
  private async resolve(organization_id: string, refs: Set<string>): Promise<Map<string, string>> {
    const users = new Map<string, string>();
    await Promise.all(
      [...refs].slice(0, 20).map(async (ref) => {
        if (ref === this.principal.idp_id && organization_id === this.principal.organization_id)
          return void users.set(ref, this.principal.user_id);
        try {
          const user = await findUserRef(organization_id, ref);
          if (user) users.set(ref, user.user_id);
          else if (isPlatformUserId(ref)) users.set(ref, ref);
        } catch {
          /* unresolved: [unknown user] */
        }
      }),
    );
    return users;
  }

  /**
   * The organization the change was made in: as a component noted it, the organization a
   * system_admin created or changed, the one a system_admin named; an admin acts only in its own.
   */
  private organization(target: { type: string; id: string | number } | undefined): string {
    if (this.principal.level < 2) return this.principal.organization_id;
    if (target?.type === 'organization') return String(target.id);
    for (const part of [this.parts.params, this.parts.body, this.parts.form, this.parts.query]) {
      const named = asFields(part)?.organization_id;
      if (typeof named === 'string' && named) return named;
    }
    return this.principal.organization_id;
  }

  /**
   * An idempotent replay (answered from an earlier request) changed nothing. The upload routes'
   * Idempotency-Key says so through the notes (edge/idempotency.ts), not by its answer header: a
   * retry of a run that failed with a 5xx runs it, and is recorded.
   */
  private replayed(result: unknown): boolean {
    if (this.notes.replayed) return true;
    const body = answerBody(result);
    return !!body && (body.duplicate === true || body.replayed === true);
  }

  /**
   * The handler answered: a 2xx that is no replay is recorded now, before the answer is sent
   * (retried briefly). When it cannot be, the change stands: the record is logged whole and the
   * intent stays for the maintenance run, which appends it with outcome `unknown`.
   */
  async answered(_event: H3Event, result: unknown): Promise<void> {
    const status = result instanceof Reply ? result.status : (this.def.status ?? 200);
    if (status < 200 || status >= 300 || this.replayed(result)) return this.failed();
    const entry = await this.entry(result);
    for (let attempt = 1; ; attempt++) {
      try {
        await recordChange(entry);
        break;
      } catch (err) {
        if (attempt >= APPEND_ATTEMPTS) {
          this.logger.error(
            { err, request_id: this.request_id, audit_record: entry, intent_id: this.intent },
            'audit record not appended: the maintenance run appends the intent as outcome unknown',
          );
          return;
        }
        await new Promise((r) => setTimeout(r, 50 * 4 ** (attempt - 1)));
      }
    }
    this.dropIntent();
  }

  /** The handler failed (or changed nothing): no record, and the intent goes. */
  failed(): void {
    this.dropIntent();
  }

  private dropIntent(): void {
    const id = this.intent;
    this.intent = undefined;
    // Left behind, it is settled by the maintenance run, which finds the record and appends nothing.
    if (id) void dropIntent(id).catch(() => undefined);
  }
}
