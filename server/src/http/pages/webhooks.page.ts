import { WEBHOOK_DELIVERY_STATES, type WebhookDelivery, type WebhookDeliveryState } from '@pacer/contract';
import { type Request, type Response, Router } from 'express';
import { AppError } from '../../errors.ts';
import { findClientOwnedBy } from '../../modules/oauth/client.repository.ts';
import type { WebhookDeps } from '../../modules/webhooks/webhook-ingest.service.ts';
import {
  listAppDeliveries,
  REPLAYABLE_STATES,
  replayAppDelivery,
} from '../../modules/webhooks/webhook-portal.service.ts';
import { UUID_PATTERN } from '../../lib/cursor.ts';
import { csrfTokenFor } from './csrf.ts';
import { formPost, noticeOf } from './forms.ts';
import {
  errorAlert,
  html,
  page,
  postButton,
  type SafeHtml,
  sendNotFoundPage,
  sendNoSuchApp,
  sendPage,
  statusNotice,
} from './html.ts';
import { signedInUserOr303 } from './session-guard.ts';

const PAGE_SIZE = 25;

function noSuchDelivery(res: Response, clientId: string): void {
  sendNotFoundPage(res, 'No such delivery.', { href: listPath(clientId), label: 'Back to the deliveries' });
}
/** A payload is at most 1 MiB; the page shows the start of it (the JSON API has all of it). */
const PREVIEW_CHARS = 64 * 1024;
const KIB = 1024;

/** Fixed notices shown after a redirect; the query names one, never carries text. */
const NOTICES = {
  replayed: 'Delivery queued again: it is processed through the same path as a new one. Reload to see its state.',
} as const;

function listPath(clientId: string, query: { state?: string | undefined; cursor?: string | undefined } = {}): string {
  const params = new URLSearchParams();
  if (query.state) params.set('state', query.state);
  if (query.cursor) params.set('cursor', query.cursor);
  const search = params.toString();
  return `/developer/apps/${encodeURIComponent(clientId)}/webhooks${search ? `?${search}` : ''}`;
}

function isState(value: unknown): value is WebhookDeliveryState {
  return typeof value === 'string' && (WEBHOOK_DELIVERY_STATES as readonly string[]).includes(value);
}

function isReplayable(state: WebhookDeliveryState): boolean {
  return (REPLAYABLE_STATES as readonly string[]).includes(state);
}

function when(iso: string | null): SafeHtml | undefined {
  return iso ? html`<time datetime="${iso}">${iso.replace('T', ' ').replace('Z', ' UTC')}</time>` : undefined;
}

/** Pretty JSON of something attacker-controlled; `html` escapes it where it is interpolated. */
function pretty(value: unknown): string {
  const text = typeof value === 'string' ? value : (JSON.stringify(value, null, 2) ?? String(value));
  return text.length > PREVIEW_CHARS
    ? `${text.slice(0, PREVIEW_CHARS)}\n… (truncated; the JSON API has all of it)`
    : text;
}

/** The payload as the page shows it: parsed JSON pretty-printed, or the stored start of its text and why only that. */
function payloadText(delivery: WebhookDelivery): string {
  if (delivery.payloadPreview === null) return pretty(delivery.payload);
  const kept = Buffer.byteLength(delivery.payloadPreview, 'utf8');
  if (kept >= delivery.payloadBytes) return delivery.payloadPreview;
  const why =
    delivery.state === 'rejected'
      ? 'the secret did not match, so only the start is kept'
      : 'it nests too deeply to show';
  return `${delivery.payloadPreview}\n… (the first ${kept} of ${delivery.payloadBytes} bytes: ${why})`;
}

function sizeOf(bytes: number): string {
  return bytes < KIB ? `${bytes} bytes` : `${(bytes / KIB).toFixed(1)} KiB (${bytes} bytes)`;
}

function pairs(record: Readonly<Record<string, string | readonly string[]>>): string {
  return Object.entries(record)
    .map(([name, value]) => `${name}: ${typeof value === 'string' ? value : value.join(', ')}`)
    .join('\n');
}

function fact(term: string, value: SafeHtml | string | number | undefined, wide = false): SafeHtml | undefined {
  return value === undefined
    ? undefined
    : html`<div ${wide ? html`class="wide"` : undefined}><dt>${term}</dt><dd>${value}</dd></div>`;
}

function deliveryFacts(delivery: WebhookDelivery): SafeHtml {
  const secret = delivery.secretMatched ? `yes (${delivery.authMethod ?? 'unknown'})` : 'no';
  const attempts = delivery.replays > 0 ? `${delivery.attempts} (replays: ${delivery.replays})` : delivery.attempts;
  const error =
    delivery.errorCode || delivery.error
      ? html`${delivery.errorCode ? html`<code>${delivery.errorCode}</code> ` : undefined}${delivery.error ?? ''}`
      : undefined;
  const duplicateOf = delivery.duplicateOf;
  return html`<dl class="facts">
    ${fact('Received', when(delivery.receivedAt))} ${fact('State', delivery.state)} ${fact('Secret matched', secret)}
    ${fact('Attempts', attempts)} ${error ? fact('Error', error, true) : undefined}
    ${delivery.webhookId === null ? undefined : fact('Webhook id', html`<code>${delivery.webhookId}</code>`)}
    ${
      duplicateOf === null
        ? undefined
        : fact('Duplicate of', html`<a href="#delivery-${duplicateOf}"><code>${duplicateOf}</code></a>`)
    }
    ${fact('Finished', when(delivery.finishedAt))}
    ${delivery.sourceIp === null ? undefined : fact('Source IP', delivery.sourceIp)}
    ${fact('Size', sizeOf(delivery.payloadBytes))}
    ${fact('SHA-256', html`<code>${delivery.payloadSha256}</code>`, true)}
    ${fact('Delivery id', html`<code>${delivery.id}</code>`)}
  </dl>`;
}

/** A folded section of a delivery (payload, headers, …): `<pre class="{className}">`. */
function folded(summary: string, className: string, text: string): SafeHtml {
  return html`<details>
    <summary>${summary}</summary>
    <pre class="${className}">${text}</pre>
  </details>`;
}

function deliveryItem(delivery: WebhookDelivery, csrf: string): SafeHtml {
  const titleId = `delivery-${delivery.id}-title`;
  const replayPath = `/developer/apps/${encodeURIComponent(delivery.clientId)}/webhooks/${delivery.id}/replay`;
  return html`<li class="${delivery.state}" id="delivery-${delivery.id}" aria-labelledby="${titleId}">
    <h3 id="${titleId}">
      <code>${delivery.event ?? '(no event)'}</code> · <span class="state">${delivery.state}</span>
    </h3>
    ${deliveryFacts(delivery)} ${folded(delivery.payloadPreview === null ? 'Payload' : 'Payload (preview)', 'payload', payloadText(delivery))}
    ${folded('Headers', 'headers', pairs(delivery.headers))}
    ${Object.keys(delivery.query).length > 0 ? folded('Query', 'query', pairs(delivery.query)) : undefined}
    ${delivery.result === null ? undefined : folded('Result', 'result', pretty(delivery.result))}
    ${isReplayable(delivery.state) ? postButton(replayPath, csrf, 'Replay', titleId) : undefined}
  </li>`;
}

interface DeliveriesView {
  readonly appName: string;
  readonly clientId: string;
  readonly baseUrl: string;
  readonly csrf: string;
  readonly state: WebhookDeliveryState | undefined;
  readonly paged: boolean;
  readonly items: readonly WebhookDelivery[];
  readonly nextCursor: string | null;
  readonly counts: Readonly<Record<string, number>>;
  readonly notice?: string | undefined;
  readonly error?: string | undefined;
}

function stateFilter(view: DeliveriesView): SafeHtml {
  const total = Object.values(view.counts).reduce((sum, count) => sum + count, 0);
  const shown = WEBHOOK_DELIVERY_STATES.filter((state) => (view.counts[state] ?? 0) > 0 || state === view.state);
  const link = (label: string, state: WebhookDeliveryState | undefined, count: number) =>
    html`<li>
      <a href="${listPath(view.clientId, { state })}" ${view.state === state ? html`aria-current="page"` : undefined}
        >${label} (${count})</a
      >
    </li>`;
  return html`<nav class="states" aria-label="Filter by state">
    <ul>
      ${link('All', undefined, total)} ${shown.map((state) => link(state, state, view.counts[state] ?? 0))}
    </ul>
  </nav>`;
}

function deliveriesPage(view: DeliveriesView): string {
  const url = `${view.baseUrl}/api/webhooks/oauth/${encodeURIComponent(view.clientId)}`;
  return page(
    `Webhook deliveries of ${view.appName}`,
    html`<h1>Webhook deliveries of ${view.appName}</h1>
      <p class="hint">Sent to <code>${url}</code>. Newest first; secrets in headers and query are shown as
        <code>[redacted]</code>.</p>
      ${statusNotice(view.notice)} ${errorAlert(view.error)}
      ${stateFilter(view)}
      <section aria-labelledby="deliveries-heading">
        <h2 id="deliveries-heading">${view.state ? `Deliveries: ${view.state}` : 'Deliveries'}</h2>
        ${
          view.items.length === 0
            ? html`<p>No deliveries${view.state ? ` in state ${view.state}` : ''}${view.paged ? ' on this page' : ''}.</p>`
            : html`<ol class="deliveries">
                ${view.items.map((delivery) => deliveryItem(delivery, view.csrf))}
              </ol>`
        }
      </section>
      <nav>
        ${view.paged ? html`<a href="${listPath(view.clientId, { state: view.state })}">Newest</a> · ` : undefined}
        ${
          view.nextCursor
            ? html`<a href="${listPath(view.clientId, { state: view.state, cursor: view.nextCursor })}" rel="next"
                  >Older</a
                >
                · `
            : undefined
        }
        <a href="/developer">Back to your apps</a>
      </nav>`,
    'page-webhooks',
  );
}

/** The state filter of the query: a known state, or none and why the one asked for was dropped. */
function stateFilterOf(value: unknown): { readonly state?: WebhookDeliveryState; readonly refused?: string } {
  if (isState(value)) return { state: value };
  if (value === undefined || value === '') return {};
  return { refused: `Filter by one of: ${WEBHOOK_DELIVERY_STATES.join(', ')}. Showing every delivery.` };
}

/** One page of deliveries; for a page link that is no longer valid, the newest page and why. */
async function deliveriesAt(
  deps: WebhookDeps,
  where: { readonly userId: string; readonly clientId: string },
  state: WebhookDeliveryState | undefined,
  cursor: string | undefined,
) {
  const { userId, clientId } = where;
  try {
    return { cursor, list: await listAppDeliveries(deps, userId, clientId, { state, cursor, limit: PAGE_SIZE }) };
  } catch (failure) {
    if (!(failure instanceof AppError) || failure.code !== 'invalid_cursor') throw failure;
    return {
      cursor: undefined,
      list: await listAppDeliveries(deps, userId, clientId, { state, limit: PAGE_SIZE }),
      refused: 'That page link is not valid any more; showing the newest deliveries.',
    };
  }
}

interface ListOptions {
  readonly status?: number;
  readonly state?: unknown;
  readonly cursor?: unknown;
  readonly notice?: string | undefined;
  readonly error?: string;
}

/** Renders the list (400 with the reason for a filter or page link it could not follow), or 404 for another's app. */
async function renderDeliveries(
  deps: WebhookDeps,
  req: Request,
  res: Response,
  where: { readonly userId: string; readonly clientId: string },
  options: ListOptions = {},
): Promise<void> {
  const app = await findClientOwnedBy(deps.db, { ownerUserId: where.userId, clientId: where.clientId }, ['app']);
  if (!app) {
    sendNoSuchApp(res);
    return;
  }
  const { state, refused: badState } = stateFilterOf(options.state);
  const cursor = typeof options.cursor === 'string' && options.cursor !== '' ? options.cursor : undefined;
  const listed = await deliveriesAt(deps, where, state, cursor);
  const refused = listed.refused ?? badState;
  const view: DeliveriesView = {
    appName: app.name,
    clientId: app.clientId,
    baseUrl: deps.config.baseUrl,
    csrf: csrfTokenFor(req, res, deps.config.secureCookies),
    state,
    paged: listed.cursor !== undefined,
    items: listed.list.items,
    nextCursor: listed.list.nextCursor,
    counts: listed.list.counts,
    notice: options.notice,
    error: refused ?? options.error,
  };
  sendPage(res, deliveriesPage(view), refused ? 400 : (options.status ?? 200));
}

async function showDeliveries(deps: WebhookDeps, req: Request, res: Response): Promise<void> {
  const user = signedInUserOr303(req, res);
  if (!user) return;
  await renderDeliveries(
    deps,
    req,
    res,
    { userId: user.id, clientId: String(req.params['clientId']) },
    {
      state: req.query['state'],
      cursor: req.query['cursor'],
      notice: noticeOf(req, NOTICES),
    },
  );
}

async function replay(deps: WebhookDeps, req: Request, res: Response): Promise<void> {
  const clientId = String(req.params['clientId']);
  const deliveryId = String(req.params['deliveryId']);
  const user = signedInUserOr303(req, res, listPath(clientId));
  if (!user) return;
  if (!UUID_PATTERN.test(deliveryId)) {
    noSuchDelivery(res, clientId);
    return;
  }
  try {
    await replayAppDelivery(deps, user.id, clientId, deliveryId);
  } catch (failure) {
    if (!(failure instanceof AppError) || (failure.code !== 'conflict' && failure.code !== 'not_found')) throw failure;
    if (failure.code === 'conflict') {
      await renderDeliveries(deps, req, res, { userId: user.id, clientId }, { status: 409, error: failure.message });
    } else if (await findClientOwnedBy(deps.db, { ownerUserId: user.id, clientId }, ['app'])) {
      noSuchDelivery(res, clientId);
    } else sendNoSuchApp(res);
    return;
  }
  res.redirect(303, `${listPath(clientId)}?notice=replayed#delivery-${deliveryId}`);
}

/**
 * `/developer/apps/{clientId}/webhooks`: what happened to every webhook
 * delivery of one of the signed-in developer's apps, with Replay.
 */
export function webhookDeliveryPages(deps: WebhookDeps): Router {
  return Router()
    .get('/developer/apps/:clientId/webhooks', (req, res) => showDeliveries(deps, req, res))
    .post('/developer/apps/:clientId/webhooks/:deliveryId/replay', formPost(), (req, res) => replay(deps, req, res));
}
