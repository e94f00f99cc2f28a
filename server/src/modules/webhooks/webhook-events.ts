import {
  NutritionUpsertSchema,
  ProfilePatchSchema,
  type Scope,
  WEBHOOK_EVENT_NAMES,
  type WebhookEventName,
  WellnessUpsertSchema,
} from '@pacer/contract';
import { z } from 'zod';
import type { InputWriteDeps } from '../changes/changes.repository.ts';
import { AppError, type FieldError } from '../../errors.ts';
import { upsertNutritionDay } from '../nutrition/nutrition.service.ts';
import type { Actor } from '../../lib/actor.ts';
import { updateProfile } from '../profile/profile.service.ts';
import { upsertWellnessDay } from '../wellness/wellness.service.ts';
import { findEventGrantee } from './webhooks.repository.ts';

/**
 * The events a webhook body may carry (docs/design.md §3 "Incoming webhooks"):
 * `{event, user, data}`, where `user` is the `sub` the app got from
 * `/api/oauth/userinfo` and `data` is exactly what the matching REST endpoint
 * takes. Each is applied through that endpoint's service, with the app as
 * the source, after checking the app holds a live grant with the scope.
 */
interface EventHandler {
  readonly scope: Scope;
  readonly data: z.ZodType;
  apply(deps: InputWriteDeps, actor: Actor, data: unknown): Promise<Record<string, unknown>>;
}

/** One handler per event name of the contract (a name without a handler fails to compile). */
const HANDLERS: Readonly<Record<WebhookEventName, EventHandler>> = {
  'wellness.upsert': {
    scope: 'health:write',
    data: WellnessUpsertSchema,
    async apply(deps, actor, data) {
      const { record, created } = await upsertWellnessDay(deps, actor, data as z.infer<typeof WellnessUpsertSchema>);
      return { date: record.date, created };
    },
  },
  'nutrition.upsert': {
    scope: 'nutrition:write',
    data: NutritionUpsertSchema,
    async apply(deps, actor, data) {
      const { log, created } = await upsertNutritionDay(deps, actor, data as z.infer<typeof NutritionUpsertSchema>);
      return { date: log.date, items: log.items.length, created };
    },
  },
  'profile.update': {
    scope: 'profile:write',
    data: ProfilePatchSchema,
    async apply(deps, actor, data) {
      const profile = await updateProfile(deps, actor.userId, data as z.infer<typeof ProfilePatchSchema>);
      return { updatedAt: profile.updatedAt };
    },
  },
};

/** A delivery that can never succeed as sent: it fails at once, without retries. */
export class PermanentEventError extends Error {
  override readonly name = 'PermanentEventError';
  readonly code: 'validation_failed' | 'no_grant' | 'not_found' | 'unprocessable';
  readonly errors: readonly FieldError[];

  constructor(code: PermanentEventError['code'], message: string, errors: readonly FieldError[] = []) {
    super(message);
    this.code = code;
    this.errors = errors;
  }
}

const EnvelopeSchema = z.looseObject({ event: z.string().min(1).max(200) });
const TargetSchema = z.looseObject({ user: z.uuid({ error: 'must be the user id (`sub` from /api/oauth/userinfo)' }) });

function isWebhookEventName(event: string): event is WebhookEventName {
  return (WEBHOOK_EVENT_NAMES as readonly string[]).includes(event);
}

export interface ParsedEvent {
  /** Position in an array body; 0 for an object body. */
  readonly index: number;
  /** Where the event sits in the body, for error paths: `''` (object body) or its index. */
  readonly path: string;
  readonly event: WebhookEventName;
  readonly body: Record<string, unknown>;
}
export interface SkippedEvent {
  readonly index: number;
  readonly event: string | null;
  readonly reason: string;
}

/** Split a body into known events and what is ignored (not an event, or an event we do not know). */
export function parseEvents(body: unknown): { readonly known: ParsedEvent[]; readonly skipped: SkippedEvent[] } {
  const entries = Array.isArray(body) ? body : [body];
  const known: ParsedEvent[] = [];
  const skipped: SkippedEvent[] = [];
  entries.forEach((entry: unknown, index) => {
    const envelope = EnvelopeSchema.safeParse(entry);
    if (!envelope.success) {
      skipped.push({ index, event: null, reason: 'not an event: no `event` name' });
      return;
    }
    const { event } = envelope.data;
    if (!isWebhookEventName(event)) {
      skipped.push({ index, event, reason: `unknown event "${event}"` });
      return;
    }
    known.push({ index, path: Array.isArray(body) ? String(index) : '', event, body: envelope.data });
  });
  return { known, skipped };
}

function joinPath(...parts: string[]): string {
  return parts.filter((part) => part !== '').join('.');
}

function prefixed(prefix: string, errors: readonly FieldError[]): FieldError[] {
  return errors.map((error) => ({ path: joinPath(prefix, error.path), message: error.message }));
}

function zodErrors(prefix: string, error: z.ZodError): FieldError[] {
  return prefixed(
    prefix,
    error.issues.map((issue) => ({ path: issue.path.map(String).join('.'), message: issue.message })),
  );
}

/**
 * Apply one event for the app (`client.id` is its row id, `client.clientId`
 * its public id and the data's source). Throws `PermanentEventError` for what
 * a retry cannot fix; anything else is transient.
 */
export async function applyEvent(
  deps: InputWriteDeps,
  client: { readonly id: string; readonly clientId: string },
  parsed: ParsedEvent,
): Promise<Record<string, unknown>> {
  const handler = HANDLERS[parsed.event];
  const target = TargetSchema.safeParse(parsed.body);
  if (!target.success) {
    const errors = zodErrors(parsed.path, target.error);
    throw new PermanentEventError('validation_failed', errors.map((e) => `${e.path}: ${e.message}`).join('; '), errors);
  }
  const data = handler.data.safeParse(parsed.body['data']);
  if (!data.success) {
    const errors = zodErrors(joinPath(parsed.path, 'data'), data.error);
    throw new PermanentEventError(
      'validation_failed',
      errors.map((error) => `${error.path}: ${error.message}`).join('; '),
      errors,
    );
  }
  const grantee = await findEventGrantee(deps.db, client.id, target.data.user, handler.scope);
  if (!grantee) {
    throw new PermanentEventError(
      'no_grant',
      `The app holds no active grant from user ${target.data.user} with the scope ${handler.scope}.`,
    );
  }
  try {
    const outcome = await handler.apply(
      deps,
      // Webhook events are applied whatever the feature flags say: the app holds the scope.
      { userId: grantee.userId, timeZone: grantee.timeZone, source: client.clientId, scopes: grantee.scopes },
      data.data,
    );
    return { event: parsed.event, user: grantee.userId, ...outcome };
  } catch (error) {
    // The services' own rules (cross-field checks, a deleted account) are as final as schema errors.
    if (error instanceof AppError && error.code !== 'internal_error' && error.code !== 'service_unavailable') {
      const errors = prefixed(joinPath(parsed.path, 'data'), error.errors ?? []);
      throw new PermanentEventError(
        error.code === 'not_found'
          ? 'not_found'
          : error.code === 'validation_failed'
            ? 'validation_failed'
            : 'unprocessable',
        error.message,
        errors,
      );
    }
    throw error;
  }
}
