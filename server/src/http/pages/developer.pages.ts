import { SCOPE_DESCRIPTIONS, SCOPES } from '@pacer/contract';
import express, { type Request, type Response, Router } from 'express';
import type { OauthClient } from '../../db/tables.ts';
import { AppError } from '../../errors.ts';
import {
  createApp,
  type CreatedApp,
  deleteApp,
  listAppsOwnedBy,
  rotateClientSecret,
  rotateWebhookSecret,
} from '../../modules/oauth/client.service.ts';
import type { WebhookDeps } from '../../modules/webhooks/webhook-ingest.service.ts';
import type { PageDeps } from './account.pages.ts';
import { csrfTokenFor, requireCsrf } from './csrf.ts';
import { html, page, type SafeHtml, sendNoSuchApp } from './html.ts';
import { signedInUserOr303 } from './session-guard.ts';
import { webhookDeliveryPages } from './webhooks.page.ts';

/** Fixed notices shown after a redirect; the query names one, never carries text. */
const NOTICES = {
  deleted: 'App deleted. Its grants and tokens no longer work.',
} as const;

const EXTRA_STYLE = html`<style>
  body {
    max-width: 44rem;
  }
  .apps {
    list-style: none;
    padding: 0;
  }
  .apps > li {
    border: 1px solid #8884;
    border-radius: 0.5rem;
    padding: 0.25rem 1rem 1rem;
    margin-top: 1rem;
  }
  .apps h3 {
    margin-bottom: 0.25rem;
  }
  .apps form {
    display: inline-block;
    margin-right: 0.5rem;
  }
  dt {
    font-weight: 600;
    margin-top: 0.5rem;
  }
  dd {
    margin-left: 0;
    overflow-wrap: anywhere;
  }
  dd ul {
    margin: 0;
    padding-left: 1.25rem;
  }
  textarea {
    width: 100%;
    padding: 0.5rem;
    font-size: 1rem;
    box-sizing: border-box;
  }
  fieldset {
    margin-top: 1rem;
  }
  label.check {
    display: flex;
    gap: 0.5rem;
    align-items: baseline;
    font-weight: normal;
    margin-top: 0.35rem;
  }
  label.check input {
    width: auto;
  }
  .hint {
    font-size: 0.9rem;
    margin: 0.25rem 0;
  }
  .notice {
    border-left: 4px solid #2e7d32;
    padding-left: 0.75rem;
  }
  .secret {
    display: block;
    padding: 0.5rem;
    border: 1px dashed #8888;
    overflow-wrap: anywhere;
    user-select: all;
  }
</style>`;

interface CreateFormState {
  readonly name?: string;
  readonly redirectUris?: string;
  readonly scopes?: readonly string[];
  readonly isPublic?: boolean;
  readonly error?: string;
  readonly fieldErrors?: Readonly<Record<string, string>>;
}

function fieldError(state: CreateFormState, field: string): SafeHtml | undefined {
  const message = state.fieldErrors?.[field];
  return message ? html`<p class="field-error" id="${field}-error">${message}</p>` : undefined;
}

function webhookUrl(baseUrl: string, clientId: string): string {
  return `${baseUrl}/api/webhooks/oauth/${encodeURIComponent(clientId)}`;
}

function appItem(app: OauthClient, csrf: string, baseUrl: string): SafeHtml {
  const headingId = `app-${app.clientId}`;
  return html`<li>
    <h3 id="${headingId}">${app.name}</h3>
    <dl>
      <dt>Client ID</dt>
      <dd><code>${app.clientId}</code></dd>
      <dt>Client type</dt>
      <dd>${app.isPublic ? 'Public (PKCE, no client secret)' : 'Confidential (client secret)'}</dd>
      <dt>Redirect URIs</dt>
      <dd>
        <ul>
          ${app.redirectUris.map((uri) => html`<li><code>${uri}</code></li>`)}
        </ul>
      </dd>
      <dt>Scopes</dt>
      <dd>${app.scopes.join(' ')}</dd>
      <dt>Webhook URL</dt>
      <dd><code>${webhookUrl(baseUrl, app.clientId)}</code></dd>
    </dl>
    <p>
      <a href="/developer/apps/${encodeURIComponent(app.clientId)}/webhooks" aria-describedby="${headingId}"
        >Webhook deliveries</a
      >
    </p>
    ${
      app.isPublic
        ? undefined
        : html`<form method="post" action="/developer/apps/${encodeURIComponent(app.clientId)}/rotate-secret">
            <input type="hidden" name="_csrf" value="${csrf}" />
            <button type="submit" aria-describedby="${headingId}">Rotate client secret</button>
          </form>`
    }
    <form method="post" action="/developer/apps/${encodeURIComponent(app.clientId)}/webhook-secret">
      <input type="hidden" name="_csrf" value="${csrf}" />
      <button type="submit" aria-describedby="${headingId}">Rotate webhook secret</button>
    </form>
    <form method="post" action="/developer/apps/${encodeURIComponent(app.clientId)}/delete">
      <input type="hidden" name="_csrf" value="${csrf}" />
      <button type="submit" aria-describedby="${headingId}">Delete</button>
    </form>
  </li>`;
}

function createForm(csrf: string, state: CreateFormState): SafeHtml {
  const checked = new Set(state.scopes ?? []);
  return html`<form method="post" action="/developer/apps" novalidate>
    <input type="hidden" name="_csrf" value="${csrf}" />
    <label for="name">Name</label>
    <input id="name" name="name" type="text" maxlength="200" required value="${state.name ?? ''}" />
    ${fieldError(state, 'name')}
    <label for="redirectUris">Redirect URIs</label>
    <p class="hint" id="redirectUris-hint">
      One per line. HTTPS, http for a loopback address (127.0.0.1, [::1], localhost), or a desktop or mobile
      app's own scheme in reverse-domain form (com.example.app:/callback).
    </p>
    <textarea id="redirectUris" name="redirectUris" rows="3" required aria-describedby="redirectUris-hint">
${state.redirectUris ?? ''}</textarea>
    ${fieldError(state, 'redirectUris')}
    <fieldset>
      <legend>Scopes</legend>
      <p class="hint">Leave all unchecked to allow every scope.</p>
      ${SCOPES.map(
        (scope) =>
          html`<label class="check"
            ><input type="checkbox" name="scope" value="${scope}" ${checked.has(scope) ? html`checked` : undefined} />
            <span><code>${scope}</code> ${SCOPE_DESCRIPTIONS[scope]}</span></label
          >`,
      )}
      ${fieldError(state, 'scope')}
    </fieldset>
    <fieldset>
      <legend>Client type</legend>
      <label class="check"
        ><input type="radio" name="clientType" value="confidential" ${state.isPublic ? undefined : html`checked`} />
        Confidential: a server that can keep a client secret</label
      >
      <label class="check"
        ><input type="radio" name="clientType" value="public" ${state.isPublic ? html`checked` : undefined} /> Public: a
        mobile, desktop or browser app (PKCE only, no secret)</label
      >
    </fieldset>
    <button type="submit">Create app</button>
  </form>`;
}

interface DeveloperView {
  readonly csrf: string;
  readonly apps: readonly OauthClient[];
  readonly baseUrl: string;
  readonly form: CreateFormState;
  readonly notice?: string | undefined;
  readonly error?: string | undefined;
}

function developerPage(view: DeveloperView): string {
  return page(
    'Developer portal',
    html`${EXTRA_STYLE}
      <h1>Developer portal</h1>
      ${view.notice ? html`<p class="notice" role="status">${view.notice}</p>` : undefined}
      ${view.error ? html`<p class="error" role="alert">${view.error}</p>` : undefined}
      <section aria-labelledby="apps-heading">
        <h2 id="apps-heading">Your apps</h2>
        ${
          view.apps.length === 0
            ? html`<p>You have not registered an app yet.</p>`
            : html`<ul class="apps">
                ${view.apps.map((app) => appItem(app, view.csrf, view.baseUrl))}
              </ul>`
        }
      </section>
      <section aria-labelledby="create-heading">
        <h2 id="create-heading">Register an app</h2>
        ${view.form.error ? html`<p class="error" role="alert">${view.form.error}</p>` : undefined}
        ${createForm(view.csrf, view.form)}
      </section>
      <nav><a href="/">Home</a> · <a href="/settings">Connected apps</a> · <a href="/docs">API docs</a></nav>`,
  );
}

const SHOWN_ONCE = html`<p role="alert">
  Copy these now: they are shown only this once. Pacer keeps the client secret only as a hash, and the webhook secret as a hash plus an encrypted copy it uses to check signatures; neither is ever displayed again.
</p>`;

function createdPage(app: CreatedApp, baseUrl: string): string {
  return page(
    'App created',
    html`${EXTRA_STYLE}
      <h1>${app.name} is registered</h1>
      ${SHOWN_ONCE}
      <dl>
        <dt>Client ID</dt>
        <dd><code id="client-id">${app.clientId}</code></dd>
        ${
          app.clientSecret
            ? html`<dt>Client secret</dt>
                <dd><code class="secret" id="client-secret">${app.clientSecret}</code></dd>`
            : html`<dt>Client type</dt>
                <dd>Public: no client secret; use PKCE.</dd>`
        }
        <dt>Webhook URL</dt>
        <dd><code>${webhookUrl(baseUrl, app.clientId)}</code></dd>
        <dt>Webhook secret</dt>
        <dd><code class="secret" id="webhook-secret">${app.webhookSecret}</code></dd>
      </dl>
      <nav><a href="/developer">Back to your apps</a></nav>`,
  );
}

function rotatedPage(appName: string, clientId: string, clientSecret: string): string {
  return page(
    'New client secret',
    html`${EXTRA_STYLE}
      <h1>New client secret for ${appName}</h1>
      ${SHOWN_ONCE}
      <p>The previous secret no longer works.</p>
      <dl>
        <dt>Client ID</dt>
        <dd><code id="client-id">${clientId}</code></dd>
        <dt>Client secret</dt>
        <dd><code class="secret" id="client-secret">${clientSecret}</code></dd>
      </dl>
      <nav><a href="/developer">Back to your apps</a></nav>`,
  );
}

function webhookSecretRotatedPage(appName: string, clientId: string, webhookSecret: string, baseUrl: string): string {
  return page(
    'New webhook secret',
    html`${EXTRA_STYLE}
      <h1>New webhook secret for ${appName}</h1>
      <p role="alert">Copy it now: Pacer will not show it again.</p>
      <p>
        It replaces the previous one at once: a delivery sent with the old secret (or signed with it) is still
        acknowledged, with <code>secretMatched: false</code>, and never processed.
      </p>
      <dl>
        <dt>Client ID</dt>
        <dd><code id="client-id">${clientId}</code></dd>
        <dt>Webhook URL</dt>
        <dd><code>${webhookUrl(baseUrl, clientId)}</code></dd>
        <dt>Webhook secret</dt>
        <dd><code class="secret" id="webhook-secret">${webhookSecret}</code></dd>
      </dl>
      <nav><a href="/developer">Back to your apps</a></nav>`,
  );
}

function stringsOf(value: unknown): string[] {
  if (typeof value === 'string') return [value];
  if (Array.isArray(value)) return value.filter((entry): entry is string => typeof entry === 'string');
  return [];
}

/**
 * `/developer`: the signed-in user's own OAuth apps: register, rotate the client or webhook secret,
 * delete, and each app's webhook deliveries.
 */
export function developerPages(deps: PageDeps & WebhookDeps): Router {
  const router = Router();
  const secure = deps.config.secureCookies;
  const baseUrl = deps.config.baseUrl;
  const form = express.urlencoded({ extended: false, limit: '64kb' });
  const csrf = requireCsrf();

  const renderPortal = async (
    req: Request,
    res: Response,
    userId: string,
    options: { status?: number; form?: CreateFormState; notice?: string; error?: string } = {},
  ) => {
    const apps = await listAppsOwnedBy(deps.db, userId);
    res
      .status(options.status ?? 200)
      .type('html')
      .send(
        developerPage({
          csrf: csrfTokenFor(req, res, secure),
          apps,
          baseUrl,
          form: options.form ?? {},
          notice: options.notice,
          error: options.error,
        }),
      );
  };

  /** A POST from a signed-out browser: sign in, then come back to the portal. */
  const signedInOr303 = (res: Response) => {
    const user = res.locals.sessionUser;
    if (!user) res.redirect(303, `/login?next=${encodeURIComponent('/developer')}`);
    return user;
  };

  const isNotFound = (error: unknown) => error instanceof AppError && error.code === 'not_found';

  router.get('/developer', async (req, res) => {
    const user = signedInUserOr303(req, res);
    if (!user) return;
    const notice = req.query['notice'] === 'deleted' ? NOTICES.deleted : undefined;
    await renderPortal(req, res, user.id, notice ? { notice } : {});
  });

  router.post('/developer/apps', form, csrf, async (req, res) => {
    const user = signedInOr303(res);
    if (!user) return;
    const body = req.body as Record<string, unknown>;
    const name = typeof body['name'] === 'string' ? body['name'] : '';
    const redirectUris = typeof body['redirectUris'] === 'string' ? body['redirectUris'] : '';
    const scopes = stringsOf(body['scope']);
    const isPublic = body['clientType'] === 'public';
    try {
      const app = await createApp(deps.db, {
        name,
        redirectUris: redirectUris.split(/\s+/),
        scopes,
        isPublic,
        ownerUserId: user.id,
        secretBox: deps.secretBox,
      });
      res.status(201).type('html').send(createdPage(app, baseUrl));
    } catch (error) {
      if (!(error instanceof AppError) || error.code !== 'validation_failed') throw error;
      const fieldErrors = Object.fromEntries((error.errors ?? []).map((entry) => [entry.path, entry.message]));
      await renderPortal(req, res, user.id, {
        status: 400,
        form: { name, redirectUris, scopes, isPublic, error: 'Please correct the fields below.', fieldErrors },
      });
    }
  });

  router.post('/developer/apps/:clientId/rotate-secret', form, csrf, async (req, res) => {
    const user = signedInOr303(res);
    if (!user) return;
    const clientId = String(req.params['clientId']);
    try {
      const rotated = await rotateClientSecret(deps.db, { ownerUserId: user.id, clientId });
      res.type('html').send(rotatedPage(rotated.name, rotated.clientId, rotated.clientSecret));
    } catch (error) {
      if (isNotFound(error)) {
        sendNoSuchApp(res);
        return;
      }
      if (error instanceof AppError && error.code === 'conflict') {
        await renderPortal(req, res, user.id, { status: 409, error: error.message });
        return;
      }
      throw error;
    }
  });

  router.post('/developer/apps/:clientId/webhook-secret', form, csrf, async (req, res) => {
    const user = signedInOr303(res);
    if (!user) return;
    try {
      const rotated = await rotateWebhookSecret(deps.db, deps.secretBox, {
        clientId: String(req.params['clientId']),
        ownerUserId: user.id,
      });
      res.type('html').send(webhookSecretRotatedPage(rotated.name, rotated.clientId, rotated.webhookSecret, baseUrl));
    } catch (error) {
      if (!isNotFound(error)) throw error;
      sendNoSuchApp(res);
    }
  });

  router.post('/developer/apps/:clientId/delete', form, csrf, async (req, res) => {
    const user = signedInOr303(res);
    if (!user) return;
    try {
      await deleteApp(deps.db, { ownerUserId: user.id, clientId: String(req.params['clientId']) });
    } catch (error) {
      if (isNotFound(error)) {
        sendNoSuchApp(res);
        return;
      }
      throw error;
    }
    res.redirect(303, '/developer?notice=deleted');
  });

  router.use(webhookDeliveryPages(deps));

  return router;
}
