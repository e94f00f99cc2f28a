import { WEBHOOK_DELIVERY_STATES, type WebhookDelivery, type WebhookDeliveryState } from '@pacer/contract';
import express, { type Request, type Response, Router } from 'express';
import { AppError } from '../../errors.ts';
import { findClientOwnedBy } from '../../modules/oauth/client.repository.ts';
import type { WebhookDeps } from '../../modules/webhooks/webhook-ingest.service.ts';
import {
  listAppDeliveries,
  REPLAYABLE_STATES,
  replayAppDelivery,
} from '../../modules/webhooks/webhook-portal.service.ts';
import { UUID_PATTERN } from '../../lib/cursor.ts';
import { csrfTokenFor, requireCsrf } from './csrf.ts';
import { html, page, type SafeHtml, sendNotFoundPage, sendNoSuchApp } from './html.ts';
import { signedInUserOr303 } from './session-guard.ts';

const PAGE_SIZE = 25;

function noSuchDelivery(res: Response, clientId: string): void {
  sendNotFoundPage(res, 'No such delivery.', { href: listPath(clientId), label: 'Back to the deliveries' });
}
/** A payload is at most 1 MiB; the page shows the start of it (the JSON API has all of it). */
const PREVIEW_CHARS = 64 * 1024;

/** Fixed notices shown after a redirect; the query names one, never carries text. */
const NOTICES = {
  replayed: 'Delivery queued again: it is processed through the same path as a new one. Reload to see its state.',
} as const;

const STYLE = html`<style>
  body {
    max-width: 60rem;
  }
  .states ul,
  .deliveries {
    list-style: none;
    padding: 0;
  }
  .states li {
    display: inline-block;
    margin: 0 0.75rem 0.25rem 0;
  }
  .states a[aria-current='page'] {
    font-weight: 700;
    text-decoration: none;
  }
  .deliveries > li {
    border: 1px solid #8884;
    border-left-width: 6px;
    border-radius: 0.5rem;
    padding: 0.25rem 1rem 0.75rem;
    margin-top: 1rem;
  }
  .deliveries > li.processed {
    border-left-color: #2e7d32;
  }
  .deliveries > li.failed,
  .deliveries > li.dead_letter,
  .deliveries > li.rejected {
    border-left-color: #b00020;
  }
  .deliveries h3 {
    font-size: 1rem;
    margin-bottom: 0.25rem;
    overflow-wrap: anywhere;
  }
  .facts {
    display: grid;
    grid-template-columns: repeat(auto-fill, minmax(13rem, 1fr));
    gap: 0.25rem 1rem;
    margin: 0.5rem 0;
  }
  .facts dt {
    font-size: 0.8rem;
    opacity: 0.75;
  }
  .facts .wide {
    grid-column: 1 / -1;
  }
  .facts dd {
    margin: 0;
    overflow-wrap: anywhere;
  }
  details {
    margin-top: 0.35rem;
  }
  summary {
    cursor: pointer;
  }
  pre {
    max-height: 24rem;
    overflow: auto;
    padding: 0.5rem;
    border: 1px solid #8884;
    font-size: 0.85rem;
    white-space: pre-wrap;
    overflow-wrap: anywhere;
  }
  .deliveries form button {
    margin-top: 0.5rem;
  }
  .notice {
    border-left: 4px solid #2e7d32;
    padding-left: 0.75rem;
  }
  .hint {
    font-size: 0.9rem;
  }
</style>`;

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

function deliveryItem(delivery: WebhookDelivery, csrf: string): SafeHtml {
  const titleId = `delivery-${delivery.id}-title`;
  const secret = delivery.secretMatched ? `yes (${delivery.authMethod ?? 'unknown'})` : 'no';
  const hasQuery = Object.keys(delivery.query).length > 0;
  return html`<li class="${delivery.state}" id="delivery-${delivery.id}" aria-labelledby="${titleId}">
    <h3 id="${titleId}">
      <code>${delivery.event ?? '(no event)'}</code> · <span class="state">${delivery.state}</span>
    </h3>
    <dl class="facts">
      ${fact('Received', when(delivery.receivedAt))} ${fact('State', delivery.state)}
      ${fact('Secret matched', secret)}
      ${fact('Attempts', delivery.replays > 0 ? `${delivery.attempts} (replays: ${delivery.replays})` : delivery.attempts)}
      ${
        delivery.errorCode || delivery.error
          ? fact(
              'Error',
              html`${delivery.errorCode ? html`<code>${delivery.errorCode}</code> ` : undefined}${delivery.error ?? ''}`,
              true,
            )
          : undefined
      }
      ${delivery.webhookId === null ? undefined : fact('Webhook id', html`<code>${delivery.webhookId}</code>`)}
      ${
        delivery.duplicateOf === null
          ? undefined
          : fact(
              'Duplicate of',
              html`<a href="#delivery-${delivery.duplicateOf}"><code>${delivery.duplicateOf}</code></a>`,
            )
      }
      ${fact('Finished', when(delivery.finishedAt))}
      ${delivery.sourceIp === null ? undefined : fact('Source IP', delivery.sourceIp)}
      ${fact('Delivery id', html`<code>${delivery.id}</code>`)}
    </dl>
    <details>
      <summary>Payload</summary>
      <pre class="payload">${pretty(delivery.payload)}</pre>
    </details>
    <details>
      <summary>Headers</summary>
      <pre class="headers">${pairs(delivery.headers)}</pre>
    </details>
    ${
      hasQuery
        ? html`<details>
            <summary>Query</summary>
            <pre class="query">${pairs(delivery.query)}</pre>
          </details>`
        : undefined
    }
    ${
      delivery.result === null
        ? undefined
        : html`<details>
            <summary>Result</summary>
            <pre class="result">${pretty(delivery.result)}</pre>
          </details>`
    }
    ${
      isReplayable(delivery.state)
        ? html`<form
            method="post"
            action="/developer/apps/${encodeURIComponent(delivery.clientId)}/webhooks/${delivery.id}/replay"
          >
            <input type="hidden" name="_csrf" value="${csrf}" />
            <button type="submit" aria-describedby="${titleId}">Replay</button>
          </form>`
        : undefined
    }
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
    html`${STYLE}
      <h1>Webhook deliveries of ${view.appName}</h1>
      <p class="hint">Sent to <code>${url}</code>. Newest first; secrets in headers and query are shown as
        <code>[redacted]</code>.</p>
      ${view.notice ? html`<p class="notice" role="status">${view.notice}</p>` : undefined}
      ${view.error ? html`<p class="error" role="alert">${view.error}</p>` : undefined}
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
  );
}

/**
 * `/developer/apps/{clientId}/webhooks`: what happened to every webhook
 * delivery of one of the signed-in developer's apps, with Replay.
 */
export function webhookDeliveryPages(deps: WebhookDeps): Router {
  const router = Router();
  const secure = deps.config.secureCookies;
  const form = express.urlencoded({ extended: false, limit: '16kb' });
  const csrf = requireCsrf();

  /** Renders the list, or answers 404 when the app is not one of the user's. */
  const render = async (
    req: Request,
    res: Response,
    userId: string,
    clientId: string,
    options: { status?: number; state?: unknown; cursor?: unknown; notice?: string; error?: string } = {},
  ) => {
    const app = await findClientOwnedBy(deps.db, { ownerUserId: userId, clientId }, ['app']);
    if (!app) {
      sendNoSuchApp(res);
      return;
    }
    let status = options.status ?? 200;
    let error = options.error;
    let state: WebhookDeliveryState | undefined;
    if (isState(options.state)) state = options.state;
    else if (options.state !== undefined && options.state !== '') {
      status = 400;
      error = `Filter by one of: ${WEBHOOK_DELIVERY_STATES.join(', ')}. Showing every delivery.`;
    }
    let cursor = typeof options.cursor === 'string' && options.cursor !== '' ? options.cursor : undefined;
    let list;
    try {
      list = await listAppDeliveries(deps, userId, clientId, { state, cursor, limit: PAGE_SIZE });
    } catch (failure) {
      if (!(failure instanceof AppError) || failure.code !== 'invalid_cursor') throw failure;
      status = 400;
      error = 'That page link is not valid any more; showing the newest deliveries.';
      cursor = undefined;
      list = await listAppDeliveries(deps, userId, clientId, { state, limit: PAGE_SIZE });
    }
    res
      .status(status)
      .type('html')
      .send(
        deliveriesPage({
          appName: app.name,
          clientId: app.clientId,
          baseUrl: deps.config.baseUrl,
          csrf: csrfTokenFor(req, res, secure),
          state,
          paged: cursor !== undefined,
          items: list.items,
          nextCursor: list.nextCursor,
          counts: list.counts,
          notice: options.notice,
          error,
        }),
      );
  };

  router.get('/developer/apps/:clientId/webhooks', async (req, res) => {
    const user = signedInUserOr303(req, res);
    if (!user) return;
    await render(req, res, user.id, String(req.params['clientId']), {
      state: req.query['state'],
      cursor: req.query['cursor'],
      ...(req.query['notice'] === 'replayed' ? { notice: NOTICES.replayed } : {}),
    });
  });

  router.post('/developer/apps/:clientId/webhooks/:deliveryId/replay', form, csrf, async (req, res) => {
    const clientId = String(req.params['clientId']);
    const deliveryId = String(req.params['deliveryId']);
    const user = res.locals.sessionUser;
    if (!user) {
      res.redirect(303, `/login?next=${encodeURIComponent(listPath(clientId))}`);
      return;
    }
    if (!UUID_PATTERN.test(deliveryId)) {
      noSuchDelivery(res, clientId);
      return;
    }
    try {
      await replayAppDelivery(deps, user.id, clientId, deliveryId);
    } catch (failure) {
      if (failure instanceof AppError && failure.code === 'conflict') {
        await render(req, res, user.id, clientId, { status: 409, error: failure.message });
        return;
      }
      if (failure instanceof AppError && failure.code === 'not_found') {
        if (await findClientOwnedBy(deps.db, { ownerUserId: user.id, clientId }, ['app'])) {
          noSuchDelivery(res, clientId);
        } else sendNoSuchApp(res);
        return;
      }
      throw failure;
    }
    res.redirect(303, `${listPath(clientId)}?notice=replayed#delivery-${deliveryId}`);
  });

  return router;
}
