import { SCOPE_DESCRIPTIONS } from '@pacer/contract';
import { type Request, type Response, Router } from 'express';
import type { User } from '../../db/tables.ts';
import { AppError } from '../../errors.ts';
import {
  type ConnectedGrant,
  listConnectedApps,
  revokeGrant,
  type ServedResources,
  surfaceOf,
} from '../../modules/oauth/grant.service.ts';
import type { PageDeps } from './account.pages.ts';
import { csrfTokenFor } from './csrf.ts';
import { formPost, noticeOf } from './forms.ts';
import { html, page, postButton, type SafeHtml, sendNotFoundPage, sendPage, statusNotice } from './html.ts';
import { signedInUserOr303 } from './session-guard.ts';

/** Fixed notices shown after a redirect; the query names one, never carries text. */
const NOTICES = {
  revoked: 'Access revoked. That connection’s tokens stop working at once.',
} as const;

function scopeLabel(scope: string): string {
  return (SCOPE_DESCRIPTIONS as Record<string, string | undefined>)[scope] ?? scope;
}

/** A moment in the user's own time zone, with the exact instant for machines. */
function formatWhen(when: Date, timeZone: string): SafeHtml {
  let text: string;
  try {
    text = new Intl.DateTimeFormat('en', { dateStyle: 'medium', timeStyle: 'short', timeZone }).format(when);
  } catch {
    text = `${when.toISOString().slice(0, 16).replace('T', ' ')} UTC`;
  }
  return html`<time datetime="${when.toISOString()}">${text}</time>`;
}

function accessLabel(resource: string | null, resources: ServedResources): string {
  switch (surfaceOf(resource, resources)) {
    case 'rest':
      return 'REST API';
    case 'mcp':
      return 'MCP (AI assistants)';
    default:
      return resource ?? 'REST API';
  }
}

function grantItem(grant: ConnectedGrant, title: string, view: SettingsView): SafeHtml {
  const { user, csrf, resources } = view;
  const headingId = `grant-${grant.grantId}`;
  return html`<li>
    <h3 id="${headingId}">${title}</h3>
    <dl>
      <dt>Access</dt>
      <dd>${accessLabel(grant.resource, resources)}</dd>
      <dt>Allowed to</dt>
      <dd>
        <ul>
          ${grant.scopes.map((scope) => html`<li title="${scope}">${scopeLabel(scope)}</li>`)}
        </ul>
      </dd>
      <dt>Connected</dt>
      <dd>${formatWhen(grant.connectedAt, user.timeZone)}</dd>
      <dt>Last used</dt>
      <dd>${grant.lastUsedAt ? formatWhen(grant.lastUsedAt, user.timeZone) : 'never'}</dd>
    </dl>
    ${postButton(`/settings/grants/${grant.grantId}/revoke`, csrf, 'Revoke', headingId)}
  </li>`;
}

interface SettingsView {
  readonly user: User;
  readonly csrf: string;
  readonly apps: readonly ConnectedGrant[];
  readonly developerTokens: readonly ConnectedGrant[];
  readonly resources: ServedResources;
  readonly notice?: string | undefined;
}

function settingsPage(view: SettingsView): string {
  const items = (grants: readonly ConnectedGrant[], title: (grant: ConnectedGrant) => string) =>
    grants.map((grant) => grantItem(grant, title(grant), view));
  return page(
    'Connected apps',
    html`<h1>Connected apps</h1>
      ${statusNotice(view.notice)}
      <p>
        Apps and AI assistants you allowed to use your Pacer data. Revoking one stops all of its access at once; it
        would have to ask you again.
      </p>
      <section aria-labelledby="apps-heading">
        <h2 id="apps-heading">Apps</h2>
        ${
          view.apps.length === 0
            ? html`<p>No apps are connected to your account.</p>`
            : html`<ul class="grants">
                ${items(view.apps, (grant) => grant.appName)}
              </ul>`
        }
      </section>
      <section aria-labelledby="developer-tokens-heading">
        <h2 id="developer-tokens-heading">Developer tokens</h2>
        ${
          view.developerTokens.length === 0
            ? html`<p>You have no active developer tokens.</p>`
            : html`<ul class="grants">
                ${items(view.developerTokens, () => 'Developer token')}
              </ul>`
        }
      </section>
      <nav><a href="/">Home</a> · <a href="/developer">Developer portal</a></nav>`,
    'page-settings',
  );
}

async function showSettings(deps: PageDeps, req: Request, res: Response): Promise<void> {
  const user = signedInUserOr303(req, res);
  if (!user) return;
  const { apps, developerTokens } = await listConnectedApps(deps.db, user.id);
  const resources: ServedResources = { rest: deps.config.baseUrl, mcp: deps.config.mcpResource };
  const csrf = csrfTokenFor(req, res, deps.config.secureCookies);
  sendPage(res, settingsPage({ user, csrf, apps, developerTokens, resources, notice: noticeOf(req, NOTICES) }));
}

async function revoke(deps: PageDeps, req: Request, res: Response): Promise<void> {
  const user = signedInUserOr303(req, res, '/settings');
  if (!user) return;
  try {
    await revokeGrant(deps.db, { userId: user.id, grantId: String(req.params['grantId']) });
  } catch (error) {
    if (!(error instanceof AppError) || error.code !== 'not_found') throw error;
    sendNotFoundPage(res, 'There is no such connected app on your account.', {
      href: '/settings',
      label: 'Back to settings',
    });
    return;
  }
  res.redirect(303, '/settings?notice=revoked');
}

/** `/settings`: the signed-in user's connected apps and developer tokens, each revocable. */
export function settingsPages(deps: PageDeps): Router {
  return Router()
    .get('/settings', (req, res) => showSettings(deps, req, res))
    .post('/settings/grants/:grantId/revoke', formPost(), (req, res) => revoke(deps, req, res));
}
