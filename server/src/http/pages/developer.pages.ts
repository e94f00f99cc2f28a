import { SCOPE_DESCRIPTIONS, SCOPES } from '@pacer/contract';
import { type Request, type Response, Router } from 'express';
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
import { csrfTokenFor } from './csrf.ts';
import { fieldErrorsOf, formPost, formText, formTexts, noticeOf } from './forms.ts';
import {
  csrfField,
  errorAlert,
  fieldError,
  html,
  page,
  postButton,
  type SafeHtml,
  sendNoSuchApp,
  sendPage,
  statusNotice,
} from './html.ts';
import { signedInUserOr303 } from './session-guard.ts';
import { webhookDeliveryPages } from './webhooks.page.ts';

/** Fixed notices shown after a redirect; the query names one, never carries text. */
const NOTICES = {
  deleted: 'App deleted. Its grants and tokens no longer work.',
} as const;

interface CreateFormState {
  readonly name?: string;
  readonly redirectUris?: string;
  readonly scopes?: readonly string[];
  readonly isPublic?: boolean;
  readonly error?: string;
  readonly fieldErrors?: Readonly<Record<string, string>>;
}

function webhookUrl(baseUrl: string, clientId: string): string {
  return `${baseUrl}/api/webhooks/oauth/${encodeURIComponent(clientId)}`;
}

function appItem(app: OauthClient, csrf: string, baseUrl: string): SafeHtml {
  const headingId = `app-${app.clientId}`;
  const appPath = `/developer/apps/${encodeURIComponent(app.clientId)}`;
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
      <a href="${appPath}/webhooks" aria-describedby="${headingId}">Webhook deliveries</a>
    </p>
    ${app.isPublic ? undefined : postButton(`${appPath}/rotate-secret`, csrf, 'Rotate client secret', headingId)}
    ${postButton(`${appPath}/webhook-secret`, csrf, 'Rotate webhook secret', headingId)}
    ${postButton(`${appPath}/delete`, csrf, 'Delete', headingId)}
  </li>`;
}

function createForm(csrf: string, state: CreateFormState): SafeHtml {
  const checked = new Set(state.scopes ?? []);
  return html`<form method="post" action="/developer/apps" novalidate>
    ${csrfField(csrf)}
    <label for="name">Name</label>
    <input id="name" name="name" type="text" maxlength="200" required value="${state.name ?? ''}" />
    ${fieldError(state.fieldErrors, 'name')}
    <label for="redirectUris">Redirect URIs</label>
    <p class="hint" id="redirectUris-hint">
      One per line. HTTPS, http for a loopback address (127.0.0.1, [::1], localhost), or a desktop or mobile
      app's own scheme in reverse-domain form (com.example.app:/callback).
    </p>
    <textarea id="redirectUris" name="redirectUris" rows="3" required aria-describedby="redirectUris-hint">
${state.redirectUris ?? ''}</textarea>
    ${fieldError(state.fieldErrors, 'redirectUris')}
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
      ${fieldError(state.fieldErrors, 'scope')}
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
    html`<h1>Developer portal</h1>
      ${statusNotice(view.notice)} ${errorAlert(view.error)}
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
        ${errorAlert(view.form.error)}
        ${createForm(view.csrf, view.form)}
      </section>
      <nav><a href="/">Home</a> · <a href="/settings">Connected apps</a> · <a href="/docs">API docs</a></nav>`,
    'page-developer',
  );
}

const SHOWN_ONCE = html`<p role="alert">
  Copy these now: they are shown only this once. Pacer keeps the client secret only as a hash, and the webhook secret as a hash plus an encrypted copy it uses to check signatures; neither is ever displayed again.
</p>`;

/** A page that shows a new secret this once: `intro`, the app's `facts`, the way back. */
function secretPage(title: string, heading: string, intro: SafeHtml, facts: SafeHtml): string {
  return page(
    title,
    html`<h1>${heading}</h1>
      ${intro}
      <dl>
        ${facts}
      </dl>
      <nav><a href="/developer">Back to your apps</a></nav>`,
    'page-developer',
  );
}

function clientIdFact(clientId: string): SafeHtml {
  return html`<dt>Client ID</dt>
    <dd><code id="client-id">${clientId}</code></dd>`;
}

function webhookUrlFact(baseUrl: string, clientId: string): SafeHtml {
  return html`<dt>Webhook URL</dt>
    <dd><code>${webhookUrl(baseUrl, clientId)}</code></dd>`;
}

function secretFact(term: string, id: string, secret: string): SafeHtml {
  return html`<dt>${term}</dt>
    <dd><code class="secret" id="${id}">${secret}</code></dd>`;
}

function createdPage(app: CreatedApp, baseUrl: string): string {
  return secretPage(
    'App created',
    `${app.name} is registered`,
    SHOWN_ONCE,
    html`${clientIdFact(app.clientId)}
      ${
        app.clientSecret
          ? secretFact('Client secret', 'client-secret', app.clientSecret)
          : html`<dt>Client type</dt>
              <dd>Public: no client secret; use PKCE.</dd>`
      }
      ${webhookUrlFact(baseUrl, app.clientId)} ${secretFact('Webhook secret', 'webhook-secret', app.webhookSecret)}`,
  );
}

function rotatedPage(appName: string, clientId: string, clientSecret: string): string {
  return secretPage(
    'New client secret',
    `New client secret for ${appName}`,
    html`${SHOWN_ONCE}
      <p>The previous secret no longer works.</p>`,
    html`${clientIdFact(clientId)} ${secretFact('Client secret', 'client-secret', clientSecret)}`,
  );
}

function webhookSecretRotatedPage(appName: string, clientId: string, webhookSecret: string, baseUrl: string): string {
  return secretPage(
    'New webhook secret',
    `New webhook secret for ${appName}`,
    html`<p role="alert">Copy it now: Pacer will not show it again.</p>
      <p>
        It replaces the previous one at once: a delivery sent with the old secret (or signed with it) is still
        acknowledged, with <code>secretMatched: false</code>, and never processed.
      </p>`,
    html`${clientIdFact(clientId)} ${webhookUrlFact(baseUrl, clientId)}
      ${secretFact('Webhook secret', 'webhook-secret', webhookSecret)}`,
  );
}

type DeveloperDeps = PageDeps & WebhookDeps;

interface PortalOptions {
  readonly status?: number;
  readonly form?: CreateFormState;
  readonly notice?: string | undefined;
  readonly error?: string;
}

/** The portal with the user's apps: after GET, and again after a POST that could not be done. */
async function renderPortal(deps: DeveloperDeps, req: Request, res: Response, userId: string, options: PortalOptions) {
  const apps = await listAppsOwnedBy(deps.db, userId);
  const csrf = csrfTokenFor(req, res, deps.config.secureCookies);
  const { form = {}, notice, error, status } = options;
  sendPage(res, developerPage({ csrf, apps, baseUrl: deps.config.baseUrl, form, notice, error }), status);
}

const isNotFound = (error: unknown) => error instanceof AppError && error.code === 'not_found';

/** The signed-in user of a portal POST; a signed-out browser signs in and comes back to the portal. */
const signedInPoster = (req: Request, res: Response) => signedInUserOr303(req, res, '/developer');

async function showPortal(deps: DeveloperDeps, req: Request, res: Response): Promise<void> {
  const user = signedInUserOr303(req, res);
  if (!user) return;
  await renderPortal(deps, req, res, user.id, { notice: noticeOf(req, NOTICES) });
}

async function registerApp(deps: DeveloperDeps, req: Request, res: Response): Promise<void> {
  const user = signedInPoster(req, res);
  if (!user) return;
  const name = formText(req, 'name');
  const redirectUris = formText(req, 'redirectUris');
  const scopes = formTexts(req, 'scope');
  const isPublic = formText(req, 'clientType') === 'public';
  try {
    const app = await createApp(deps.db, {
      name,
      redirectUris: redirectUris.split(/\s+/),
      scopes,
      isPublic,
      ownerUserId: user.id,
      secretBox: deps.secretBox,
    });
    sendPage(res, createdPage(app, deps.config.baseUrl), 201);
  } catch (error) {
    if (!(error instanceof AppError) || error.code !== 'validation_failed') throw error;
    const fieldErrors = fieldErrorsOf(error);
    const form = { name, redirectUris, scopes, isPublic, error: 'Please correct the fields below.', fieldErrors };
    await renderPortal(deps, req, res, user.id, { status: 400, form });
  }
}

async function rotateSecret(deps: DeveloperDeps, req: Request, res: Response): Promise<void> {
  const user = signedInPoster(req, res);
  if (!user) return;
  try {
    const rotated = await rotateClientSecret(deps.db, {
      ownerUserId: user.id,
      clientId: String(req.params['clientId']),
    });
    sendPage(res, rotatedPage(rotated.name, rotated.clientId, rotated.clientSecret));
  } catch (error) {
    if (isNotFound(error)) sendNoSuchApp(res);
    else if (error instanceof AppError && error.code === 'conflict') {
      await renderPortal(deps, req, res, user.id, { status: 409, error: error.message });
    } else throw error;
  }
}

async function rotateWebhook(deps: DeveloperDeps, req: Request, res: Response): Promise<void> {
  const user = signedInPoster(req, res);
  if (!user) return;
  try {
    const rotated = await rotateWebhookSecret(deps.db, deps.secretBox, {
      clientId: String(req.params['clientId']),
      ownerUserId: user.id,
    });
    const { name, clientId, webhookSecret } = rotated;
    sendPage(res, webhookSecretRotatedPage(name, clientId, webhookSecret, deps.config.baseUrl));
  } catch (error) {
    if (!isNotFound(error)) throw error;
    sendNoSuchApp(res);
  }
}

async function removeApp(deps: DeveloperDeps, req: Request, res: Response): Promise<void> {
  const user = signedInPoster(req, res);
  if (!user) return;
  try {
    await deleteApp(deps.db, { ownerUserId: user.id, clientId: String(req.params['clientId']) });
  } catch (error) {
    if (!isNotFound(error)) throw error;
    sendNoSuchApp(res);
    return;
  }
  res.redirect(303, '/developer?notice=deleted');
}

/**
 * `/developer`: the signed-in user's own OAuth apps: register, rotate the client or webhook secret,
 * delete, and each app's webhook deliveries.
 */
export function developerPages(deps: DeveloperDeps): Router {
  const post = formPost('64kb');
  return Router()
    .get('/developer', (req, res) => showPortal(deps, req, res))
    .post('/developer/apps', post, (req, res) => registerApp(deps, req, res))
    .post('/developer/apps/:clientId/rotate-secret', post, (req, res) => rotateSecret(deps, req, res))
    .post('/developer/apps/:clientId/webhook-secret', post, (req, res) => rotateWebhook(deps, req, res))
    .post('/developer/apps/:clientId/delete', post, (req, res) => removeApp(deps, req, res))
    .use(webhookDeliveryPages(deps));
}
